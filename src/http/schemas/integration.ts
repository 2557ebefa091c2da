import { Type, type Static } from '@sinclair/typebox';
import {
  DELIVERY_CHANNELS,
  FILTER_OPERATORS,
  FILTER_SOURCES,
  FILTER_TYPES,
  INTEGRATION_KINDS,
} from '../../domain/types.js';
import { IsoDateTime } from './common.js';

/** A plain `enum` (not anyOf of literals) so a bad value reads "must be one of the following values: ...". */
const StringEnum = <T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const FieldFilterPartSchema = Type.Object(
  {
    field: Type.String(),
    value: Type.String(),
    operator: StringEnum(FILTER_OPERATORS),
    on: StringEnum(FILTER_SOURCES),
  },
  { additionalProperties: false },
);

/** The spec's StepFilter, shared by integration conditions and workflow step filters. */
export const StepFilterSchema = Type.Object(
  {
    isNegated: Type.Boolean(),
    type: StringEnum(FILTER_TYPES),
    value: StringEnum(['AND', 'OR'] as const),
    children: Type.Array(FieldFilterPartSchema),
  },
  { additionalProperties: false },
);

const text = Type.Optional(Type.String());
const flag = Type.Optional(Type.Boolean());

/**
 * The spec's Credentials object: every field optional, `port` a string. Providers may read fields beyond
 * the spec's list (e.g. SES `configurationSetName`), so other properties are kept, not rejected.
 */
export const CredentialsSchema = Type.Object(
  {
    secure: flag, requireTls: flag, ignoreTls: flag, hmac: flag, authenticateByToken: flag, useFromAddressOverride: flag,
    tlsOptions: Type.Optional(Type.Object({}, { additionalProperties: true })),
    apiKey: text, user: text, secretKey: text, domain: text, password: text, host: text,
    port: Type.Optional(Type.Union([Type.String(), Type.Integer({ minimum: 0, maximum: 65535 })], { description: 'a string; a number is accepted and stored as a string' })),
    region: text, accountSid: text, messageProfileId: text, token: text, from: text, senderName: text, projectName: text,
    applicationId: text, clientId: text, baseUrl: text, webhookUrl: text, redirectUrl: text, serviceAccount: text,
    ipPoolName: text, apiKeyRequestHeader: text, secretKeyRequestHeader: text, idPath: text, datePath: text, apiToken: text,
    authenticationTokenKey: text, instanceId: text, alertUid: text, title: text, imageUrl: text, state: text,
    externalLink: text, channelId: text, phoneNumberIdentification: text, accessKey: text, appSid: text, senderId: text,
    tenantId: text, ExternalAppBaseUrl: text, signingSecret: text, outboundIntegrationId: text, fromAddressOverride: text,
    emailSlugPrefix: text, externalEnvironmentId: text, externalVaultId: text, externalWorkspaceId: text,
  },
  { additionalProperties: true },
);

export const ConfigurationsSchema = Type.Object(
  { inboundWebhookEnabled: flag, inboundWebhookSigningKey: text },
  { additionalProperties: true },
);

/** The spec's Integration record, plus createdAt/updatedAt. `credentials` only for session callers. */
export const IntegrationSchema = Type.Object({
  _id: Type.String(),
  _environmentId: Type.String(),
  _organizationId: Type.String(),
  name: Type.String(),
  identifier: Type.String(),
  providerId: Type.String(),
  channel: Type.Optional(StringEnum(DELIVERY_CHANNELS, { description: 'absent for agent-kind integrations' })),
  kind: StringEnum(INTEGRATION_KINDS),
  credentials: Type.Optional(CredentialsSchema),
  configurations: ConfigurationsSchema,
  active: Type.Boolean(),
  deleted: Type.Boolean(),
  deletedAt: Type.Optional(IsoDateTime),
  deletedBy: Type.Optional(Type.String()),
  primary: Type.Boolean(),
  conditions: Type.Array(StepFilterSchema),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});

const Name = Type.String({ minLength: 1, maxLength: 256 });
const Identifier = Type.String({ minLength: 1, maxLength: 256 });

export const CreateIntegrationBody = Type.Object(
  {
    providerId: Type.String({ minLength: 1, description: 'a provider id of the catalogue (see README)' }),
    channel: Type.Optional(StringEnum(DELIVERY_CHANNELS, { description: 'required only when the provider serves two channels' })),
    kind: Type.Optional(StringEnum(INTEGRATION_KINDS)),
    name: Type.Optional(Name),
    identifier: Type.Optional(Identifier),
    _environmentId: Type.Optional(Type.String({ description: 'ignored unless it differs from the caller environment (400)' })),
    credentials: Type.Optional(CredentialsSchema),
    active: Type.Optional(Type.Boolean({ default: false })),
    check: Type.Optional(Type.Boolean({ description: 'default true: run the live credentials check when active' })),
    conditions: Type.Optional(Type.Array(StepFilterSchema)),
    configurations: Type.Optional(ConfigurationsSchema),
  },
  { additionalProperties: false },
);
export type CreateIntegrationBody = Static<typeof CreateIntegrationBody>;

export const UpdateIntegrationBody = Type.Object(
  {
    name: Type.Optional(Name),
    identifier: Type.Optional(Identifier),
    _environmentId: Type.Optional(Type.String()),
    active: Type.Optional(Type.Boolean()),
    check: Type.Optional(Type.Boolean({ description: 'default true: run the live credentials check when active' })),
    credentials: Type.Optional(CredentialsSchema),
    conditions: Type.Optional(Type.Array(StepFilterSchema)),
    configurations: Type.Optional(ConfigurationsSchema),
  },
  { additionalProperties: false },
);
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBody>;

export const IntegrationParams = Type.Object({ integrationId: Type.String() });
