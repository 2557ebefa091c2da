import { Type, type Static } from '@sinclair/typebox';
import { USER_ROLES } from '../../domain/types.js';
import { IsoDateTime } from './common.js';

/**
 * The dashboard-only routes (`/v1/dashboard/*`): sign-in, users, invites, secret keys, audit log, providers.
 * Everything else the dashboard shows comes from the public REST routes, called with the session cookie.
 */

export const Role = Type.Union(USER_ROLES.map((role) => Type.Literal(role)));
const Email = Type.String({ minLength: 3, maxLength: 254, description: 'Compared case-insensitively' });
const Password = Type.String({ minLength: 1, maxLength: 256 });
const NewPassword = Type.String({ minLength: 8, maxLength: 256, description: 'At least 8 characters' });
const Name = Type.String({ maxLength: 200 });
const Token = Type.String({ minLength: 1, maxLength: 200 });

export const UserSchema = Type.Object({
  _id: Type.String(),
  _organizationId: Type.String(),
  email: Type.String(),
  name: Type.Optional(Type.String()),
  role: Role,
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});

export const SessionStarted = Type.Object({
  user: UserSchema,
  csrfToken: Type.String({ description: 'Send as X-CSRF-Token on every non-GET request of this session' }),
});

export const SetupStatus = Type.Object({ required: Type.Boolean({ description: 'True while no dashboard user exists' }) });

export const SetupBody = Type.Object({ token: Token, email: Email, password: NewPassword, name: Type.Optional(Name) });
export type SetupBody = Static<typeof SetupBody>;

export const LoginBody = Type.Object({ email: Email, password: Password });

export const Profile = Type.Object({
  user: UserSchema,
  organization: Type.Object({ _id: Type.String(), name: Type.String() }),
  environments: Type.Array(
    Type.Object({
      _id: Type.String(),
      name: Type.String(),
      identifier: Type.Optional(Type.String({ description: 'The Inbox application identifier' })),
    }),
  ),
  csrfToken: Type.String(),
});

export const EnvironmentHeaders = Type.Object({
  'novu-environment-id': Type.Optional(
    Type.String({ description: 'Dashboard (cookie) callers: the environment to act in; default the development environment' }),
  ),
  'x-csrf-token': Type.Optional(Type.String({ description: "Dashboard (cookie) callers: the session's CSRF token, on every non-GET request" })),
  'idempotency-key': Type.Optional(Type.String()),
});

export const UserParams = Type.Object({ userId: Type.String() });
export const UpdateUserBody = Type.Object({
  role: Type.Optional(Role),
  name: Type.Optional(Type.Union([Name, Type.Null()], { description: 'null or "" clears it' })),
});

export const CreateInviteBody = Type.Object({
  role: Role,
  email: Type.Optional(Type.String({ minLength: 3, maxLength: 254, description: 'Only this address may accept' })),
});
export const InviteCreatedSchema = Type.Object({
  _id: Type.String(),
  url: Type.String({ description: 'The link to hand over, relative to the dashboard host (shown once; no email is sent)' }),
  role: Role,
  email: Type.Optional(Type.String()),
  expiresAt: IsoDateTime,
});
export const InviteSchema = Type.Object({
  _id: Type.String(),
  role: Role,
  email: Type.Optional(Type.String()),
  createdBy: Type.Optional(Type.String()),
  createdAt: IsoDateTime,
  expiresAt: IsoDateTime,
  expired: Type.Boolean(),
});
export const InviteParams = Type.Object({ inviteId: Type.String() });
export const AcceptInviteBody = Type.Object({ token: Token, email: Email, password: NewPassword, name: Type.Optional(Name) });

export const ApiKeySchema = Type.Object({
  _id: Type.String(),
  last4: Type.Optional(Type.String()),
  maskedKey: Type.String(),
  createdAt: IsoDateTime,
  createdBy: Type.Optional(Type.String()),
  revokedAt: Type.Optional(IsoDateTime),
});
export const ApiKeyCreated = Type.Object({ _id: Type.String(), secretKey: Type.String({ description: 'Shown once' }) });
export const ApiKeyParams = Type.Object({ keyId: Type.String() });

export const AuditEntrySchema = Type.Object({
  _id: Type.String(),
  _organizationId: Type.String(),
  _environmentId: Type.Optional(Type.String()),
  actor: Type.Object({
    kind: Type.String({ description: 'user, apiKey, session (Bearer token) or anonymous (a refused sign-in)' }),
    id: Type.Optional(Type.String()),
    label: Type.Optional(Type.String({ description: "The user's email, or the email a refused sign-in tried" })),
  }),
  action: Type.String({ description: 'auth.login, integration.updated, api_key.revoked, subscriber.deleted, ...' }),
  target: Type.Optional(Type.Object({ type: Type.String(), id: Type.String() })),
  outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
  ip: Type.Optional(Type.String()),
  createdAt: IsoDateTime,
});
export const AuditQuery = Type.Object({
  page: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
});

export const ProviderSchema = Type.Object({
  providerId: Type.String(),
  channel: Type.Optional(Type.String()),
  kind: Type.String(),
  deliverable: Type.Boolean({ description: 'False: accepted for configuration, but Herald does not deliver through it' }),
  credentialFields: Type.Array(Type.Object({ key: Type.String(), required: Type.Boolean(), secret: Type.Boolean() })),
});

export const PreviewParams = Type.Object({ workflowId: Type.String(), stepId: Type.String() });
export const PreviewBody = Type.Object({
  controlValues: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The editor’s current values; the stored ones when absent' })),
  previewPayload: Type.Optional(
    Type.Object({
      subscriber: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      actor: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  ),
});
export const PreviewResponse = Type.Object({
  previewPayloadExample: Type.Object({
    subscriber: Type.Record(Type.String(), Type.Unknown()),
    payload: Type.Record(Type.String(), Type.Unknown()),
    actor: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
  schema: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  result: Type.Object({
    type: Type.String(),
    preview: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    error: Type.Optional(Type.Object({ title: Type.String(), message: Type.String(), hint: Type.String() })),
  }),
});

export const InboxPreviewParams = Type.Object({ subscriberId: Type.String({ description: "The subscriber's subscriberId" }) });
export const InboxPreviewSchema = Type.Object({
  applicationIdentifier: Type.String({ description: 'The selected environment\'s application identifier (`GET /v1/environments/me` `identifier`)' }),
  subscriberId: Type.String(),
  subscriberHash: Type.Optional(
    Type.String({ description: "HMAC-SHA256 (hex) of the subscriberId under the environment's newest secret key; only when the in-app integration has `credentials.hmac: true`" }),
  ),
});
