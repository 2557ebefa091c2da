import { Type, type Static } from '@sinclair/typebox';
import { IsoDateTime, PageEnvelope } from './common.js';

/**
 * `type: [x, 'null']` rather than anyOf: with the app's type coercion, anyOf would turn a null into "" in
 * its string branch before reaching the null one.
 */
export const NullableString = (options: { description?: string; minLength?: number; maxLength?: number } = {}) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], ...options });

const NullableObject = Type.Unsafe<Record<string, unknown> | null>({ type: ['object', 'null'], additionalProperties: true });

export const ChannelCredentialsSchema = Type.Object(
  {
    webhookUrl: Type.Optional(Type.String()),
    channel: Type.Optional(Type.String()),
    deviceTokens: Type.Optional(Type.Array(Type.String())),
    alertUid: Type.Optional(Type.String()),
    title: Type.Optional(Type.String()),
    imageUrl: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
    externalUrl: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const ChannelSettingsSchema = Type.Object({
  providerId: Type.String(),
  integrationIdentifier: Type.Optional(Type.String()),
  credentials: ChannelCredentialsSchema,
  _integrationId: Type.String(),
});

/** The spec's Subscriber record. */
export const SubscriberSchema = Type.Object(
  {
    _id: Type.String(),
    firstName: Type.Optional(NullableString()),
    lastName: Type.Optional(NullableString()),
    email: Type.Optional(NullableString()),
    phone: Type.Optional(NullableString()),
    avatar: Type.Optional(NullableString()),
    locale: Type.Optional(NullableString()),
    timezone: Type.Optional(NullableString()),
    channels: Type.Array(ChannelSettingsSchema),
    topics: Type.Array(Type.String(), { description: 'deprecated' }),
    isOnline: Type.Optional(Type.Unsafe<boolean | null>({ type: ['boolean', 'null'] })),
    lastOnlineAt: Type.Optional(NullableString({ description: 'ISO 8601' })),
    __v: Type.Integer({ description: 'version of the subscriber document' }),
    data: Type.Optional(NullableObject),
    subscriberId: Type.String(),
    _organizationId: Type.String(),
    _environmentId: Type.String(),
    deleted: Type.Boolean(),
    createdAt: IsoDateTime,
    updatedAt: IsoDateTime,
  },
);

const profileFields = {
  firstName: Type.Optional(NullableString()),
  lastName: Type.Optional(NullableString()),
  email: Type.Optional(NullableString({ description: 'validated as an email address' })),
  phone: Type.Optional(NullableString()),
  avatar: Type.Optional(NullableString({ description: 'a URL or identifier' })),
  locale: Type.Optional(NullableString({ description: 'BCP 47 language tag' })),
  timezone: Type.Optional(NullableString({ description: 'IANA time zone' })),
  data: Type.Optional(NullableObject),
};

/** PATCH body: every field optional; absent = unchanged, null = cleared. */
export const PatchSubscriberBody = Type.Object(profileFields);
export type PatchSubscriberBody = Static<typeof PatchSubscriberBody>;

export const CreateSubscriberBody = Type.Object({
  subscriberId: Type.String({ minLength: 1, maxLength: 256 }),
  ...profileFields,
});
export type CreateSubscriberBody = Static<typeof CreateSubscriberBody>;

export const CreateSubscriberQuery = Type.Object({
  failIfExists: Type.Optional(Type.Boolean({ default: false, description: 'true: an existing subscriberId is a 409' })),
});

/** `isOnline` (Novu's v1 API, `@novu/api`) or `online` (the name the legacy `@novu/node` SDK sends); one is required. */
export const OnlineStatusBody = Type.Object({
  isOnline: Type.Optional(Type.Boolean()),
  online: Type.Optional(Type.Boolean({ description: 'the same flag under the name @novu/node sends' })),
});

export const SubscriberParams = Type.Object({ subscriberId: Type.String() });

export const ListSubscribersQuery = Type.Object({
  email: Type.Optional(Type.String({ description: 'exact, case-insensitive' })),
  name: Type.Optional(Type.String({ description: 'substring of the first, last or full name, case-insensitive' })),
  subscriberId: Type.Optional(Type.String()),
  phone: Type.Optional(Type.String({ description: 'exact' })),
  after: Type.Optional(Type.String({ description: "cursor: a previous answer's `next` (replaces page)" })),
  before: Type.Optional(Type.String({ description: "cursor: a previous answer's `previous` (replaces page)" })),
  orderDirection: Type.Optional(Type.Unsafe<'ASC' | 'DESC'>({ type: 'string', enum: ['ASC', 'DESC'], default: 'DESC' })),
  orderBy: Type.Optional(Type.Unsafe<'createdAt' | '_id'>({ type: 'string', enum: ['createdAt', '_id'], description: 'both give creation order' })),
  includeCursor: Type.Optional(Type.Boolean({ description: 'accepted for Novu clients; cursors are always included' })),
  page: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
});

/** Herald's page fields plus Novu v2's cursor fields (`next`, `previous`, `totalCountCapped`). */
export const SubscriberListBody = Type.Composite([
  PageEnvelope(SubscriberSchema, { totalCount: true }),
  Type.Object({ next: NullableString(), previous: NullableString(), totalCountCapped: Type.Boolean() }),
]);

// ---- v1 (the legacy `@novu/node` SDK's routes) ---------------------------------------------------------

/** `PUT /v1/subscribers/{subscriberId}`: Novu's v1 update changes only the fields sent (null clears), like PATCH. */
export const UpdateSubscriberV1Body = PatchSubscriberBody;

export const ListSubscribersV1Query = Type.Object({
  page: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
});

/** Novu v1's offset page: `{ page, totalCount, pageSize, hasMore, data }`. */
export const SubscriberListV1Body = PageEnvelope(SubscriberSchema, { totalCount: true });

export const BulkSubscribersBody = Type.Object({
  subscribers: Type.Array(CreateSubscriberBody, { minItems: 1, maxItems: 500 }),
});

export const BulkSubscribersReport = Type.Object({
  created: Type.Array(Type.Object({ subscriberId: Type.String() })),
  updated: Type.Array(Type.Object({ subscriberId: Type.String() })),
  failed: Type.Array(Type.Object({ subscriberId: Type.String(), message: Type.String() })),
});
