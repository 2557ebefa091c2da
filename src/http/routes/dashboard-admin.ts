import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { acceptInvite } from '../../usecases/dashboard/accept-invite.js';
import { createEnvironmentApiKey } from '../../usecases/dashboard/create-environment-api-key.js';
import { createInvite } from '../../usecases/dashboard/create-invite.js';
import { deleteUser } from '../../usecases/dashboard/delete-user.js';
import { getInboxPreview } from '../../usecases/dashboard/get-inbox-preview.js';
import { listApiKeys } from '../../usecases/dashboard/list-api-keys.js';
import { listAuditLog } from '../../usecases/dashboard/list-audit-log.js';
import { listInvites } from '../../usecases/dashboard/list-invites.js';
import { listProviders } from '../../usecases/dashboard/list-providers.js';
import { listUsers } from '../../usecases/dashboard/list-users.js';
import { revokeApiKey } from '../../usecases/dashboard/revoke-api-key.js';
import { revokeInvite } from '../../usecases/dashboard/revoke-invite.js';
import { updateUser } from '../../usecases/dashboard/update-user.js';
import { callerOf } from '../auth.js';
import { Acknowledged, commonErrorResponses, DataEnvelope, PageEnvelope } from '../schemas/common.js';
import {
  AcceptInviteBody,
  ApiKeyCreated,
  ApiKeyParams,
  ApiKeySchema,
  AuditEntrySchema,
  AuditQuery,
  CreateInviteBody,
  EnvironmentHeaders,
  InboxPreviewParams,
  InboxPreviewSchema,
  InviteCreatedSchema,
  InviteParams,
  InviteSchema,
  ProviderSchema,
  SessionStarted,
  UpdateUserBody,
  UserParams,
  UserSchema,
} from '../schemas/dashboard.js';
import { setSessionCookie } from '../session-cookie.js';

const tags = ['Dashboard'];
const headers = EnvironmentHeaders;

/**
 * Users, invites, secret keys, the audit log, the provider catalogue and the Inbox preview's settings: what only the
 * dashboard needs.
 */
export const dashboardAdminRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v1/dashboard/users',
    {
      config: { dashboardOnly: true },
      schema: { tags, summary: 'The users of the organization', headers, response: { 200: DataEnvelope(Type.Array(UserSchema)), ...commonErrorResponses } },
    },
    async (request) => ({ data: await listUsers(deps, { caller: callerOf(request) }) }),
  );

  app.patch(
    '/v1/dashboard/users/:userId',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: {
        tags,
        summary: "Change a user's role or name (admins; the last admin cannot become a viewer)",
        headers,
        params: UserParams,
        body: UpdateUserBody,
        response: { 200: DataEnvelope(UserSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await updateUser(deps, { caller: callerOf(request), userId: request.params.userId, ...request.body }) }),
  );

  app.delete(
    '/v1/dashboard/users/:userId',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: {
        tags,
        summary: 'Delete a user and end their sessions (admins; never the last admin)',
        headers,
        params: UserParams,
        response: { 200: DataEnvelope(Acknowledged), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await deleteUser(deps, { caller: callerOf(request), userId: request.params.userId }) }),
  );

  app.post(
    '/v1/dashboard/invites',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: {
        tags,
        summary: 'Create an invite link with a role (admins); the link is copied by hand, no email is sent',
        headers,
        body: CreateInviteBody,
        response: { 201: DataEnvelope(InviteCreatedSchema), ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.status(201).send({ data: await createInvite(deps, { caller: callerOf(request), ...request.body }) }),
  );

  app.get(
    '/v1/dashboard/invites',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: { tags, summary: 'Open invites, newest first (admins)', headers, response: { 200: DataEnvelope(Type.Array(InviteSchema)), ...commonErrorResponses } },
    },
    async (request) => ({ data: await listInvites(deps, { caller: callerOf(request) }) }),
  );

  app.delete(
    '/v1/dashboard/invites/:inviteId',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: {
        tags,
        summary: 'Delete an open invite: its link stops working (admins)',
        headers,
        params: InviteParams,
        response: { 200: DataEnvelope(Acknowledged), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await revokeInvite(deps, { caller: callerOf(request), inviteId: request.params.inviteId }) }),
  );

  app.post(
    '/v1/dashboard/invites/accept',
    {
      config: { public: true },
      schema: {
        tags,
        summary: "Accept an invite: creates the user with the invite's role and signs them in",
        description: 'Sets the `herald_session` cookie. The invite works once.',
        body: AcceptInviteBody,
        response: { 201: DataEnvelope(SessionStarted), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const started = await acceptInvite(deps, request.body);
      setSessionCookie(request, reply, started.sessionToken, started.expiresAt);
      return reply.status(201).send({ data: { user: started.user, csrfToken: started.csrfToken } });
    },
  );

  app.get(
    '/v1/dashboard/api-keys',
    {
      config: { dashboardOnly: true },
      schema: {
        tags,
        summary: "The environment's secret keys, masked (revoked ones included)",
        headers,
        response: { 200: DataEnvelope(Type.Array(ApiKeySchema)), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await listApiKeys(deps, { caller: callerOf(request) }) }),
  );

  app.post(
    '/v1/dashboard/api-keys',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: {
        tags,
        summary: 'Create a secret key for the environment (admins); the key is shown once',
        headers,
        response: { 201: DataEnvelope(ApiKeyCreated), ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.status(201).send({ data: await createEnvironmentApiKey(deps, { caller: callerOf(request) }) }),
  );

  app.delete(
    '/v1/dashboard/api-keys/:keyId',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: {
        tags,
        summary: 'Revoke a secret key (admins): it stops working at once on every process',
        headers,
        params: ApiKeyParams,
        response: { 200: DataEnvelope(Acknowledged), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await revokeApiKey(deps, { caller: callerOf(request), keyId: request.params.keyId }) }),
  );

  app.get(
    '/v1/dashboard/audit-log',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: {
        tags,
        summary: "The organization's audit log, newest first (admins)",
        description: 'Sign-ins (refused ones too), integration and subscriber credential changes, key changes, workflow changes, deletions and user changes: who, what, when.',
        headers,
        querystring: AuditQuery,
        response: { 200: PageEnvelope(AuditEntrySchema), ...commonErrorResponses },
      },
    },
    async (request) => listAuditLog(deps, { caller: callerOf(request), page: request.query.page, limit: request.query.limit }),
  );

  app.get(
    '/v1/dashboard/providers',
    {
      config: { dashboardOnly: true },
      schema: {
        tags,
        summary: 'The provider catalogue per channel, with the credential fields of each provider',
        headers,
        response: { 200: DataEnvelope(Type.Array(ProviderSchema)), ...commonErrorResponses },
      },
    },
    async () => ({ data: listProviders(deps) }),
  );

  app.get(
    '/v1/dashboard/subscribers/:subscriberId/inbox-preview',
    {
      config: { dashboardOnly: true, adminOnly: true },
      schema: {
        tags,
        summary: "What the dashboard's live <Inbox /> preview of a subscriber needs (admins)",
        description:
          "The selected environment's (`Novu-Environment-Id`) application identifier and the subscriberId, plus " +
          "`subscriberHash` when the environment's active in-app integration has `credentials.hmac: true`: computed on the " +
          'server, so the browser never holds a secret key. Admins only (viewers get 403): the preview is a real Inbox ' +
          'session, and its clicks mark messages read, archive them and change preferences. A subscriber of another ' +
          'environment is a 404, like an unknown one. 422 when HMAC is on and no secret key can sign the hash.',
        headers,
        params: InboxPreviewParams,
        response: { 200: DataEnvelope(InboxPreviewSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await getInboxPreview(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId }) }),
  );
};
