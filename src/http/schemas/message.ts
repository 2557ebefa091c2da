import { Type, type Static } from '@sinclair/typebox';
import { DELIVERY_CHANNELS, MARK_AS_VALUES, MESSAGE_STATUSES, PROVIDER_REPORTED_STATES, SEVERITIES } from '../../domain/types.js';
import { FreeObject, IsoDateTime } from './common.js';
import { NullableString, SubscriberSchema } from './subscriber.js';

/** A plain `enum` so a bad value reads "must be one of the following values: ...". */
export const StringEnum = <T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

const EmailBlockSchema = Type.Object({
  type: StringEnum(['button', 'text'] as const),
  content: Type.String(),
  url: Type.Optional(Type.String()),
  styles: Type.Optional(Type.Object({ textAlign: StringEnum(['center', 'left', 'right'] as const) })),
});

const MessageButtonSchema = Type.Object({
  type: StringEnum(['primary', 'secondary'] as const),
  content: Type.String(),
  resultContent: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  target: Type.Optional(Type.String()),
});

export const MessageCtaSchema = Type.Object({
  type: Type.Optional(StringEnum(['redirect'] as const)),
  data: Type.Optional(Type.Object({ url: Type.Optional(Type.String()) }, { additionalProperties: true })),
  action: Type.Optional(
    Type.Object({
      status: Type.Optional(StringEnum(['pending', 'done'] as const)),
      buttons: Type.Optional(Type.Array(MessageButtonSchema)),
      result: Type.Optional(
        Type.Object({
          payload: Type.Optional(FreeObject),
          type: Type.Optional(StringEnum(['primary', 'secondary'] as const)),
        }),
      ),
    }),
  ),
});

/** The spec's Message record. */
export const MessageSchema = Type.Object({
  _id: Type.String(),
  _templateId: Type.Optional(NullableString()),
  _environmentId: Type.String(),
  _messageTemplateId: Type.Optional(NullableString()),
  _organizationId: Type.String(),
  _notificationId: Type.String(),
  _subscriberId: Type.String(),
  subscriber: Type.Optional(SubscriberSchema),
  template: Type.Optional(FreeObject),
  templateIdentifier: Type.Optional(Type.String()),
  createdAt: IsoDateTime,
  updatedAt: Type.Optional(IsoDateTime),
  deliveredAt: Type.Optional(Type.Array(Type.String())),
  lastSeenDate: Type.Optional(Type.String()),
  lastReadDate: Type.Optional(Type.String()),
  content: Type.Optional(Type.Union([Type.String(), Type.Array(EmailBlockSchema)])),
  transactionId: Type.String(),
  subject: Type.Optional(Type.String()),
  channel: StringEnum(DELIVERY_CHANNELS),
  read: Type.Boolean(),
  seen: Type.Boolean(),
  snoozedUntil: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  phone: Type.Optional(Type.String()),
  directWebhookUrl: Type.Optional(Type.String()),
  providerId: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  deviceTokens: Type.Optional(Type.Array(Type.String())),
  cta: MessageCtaSchema,
  _feedId: Type.Optional(NullableString()),
  status: StringEnum(MESSAGE_STATUSES),
  errorId: Type.Optional(Type.String()),
  errorText: Type.Optional(Type.String()),
  payload: Type.Optional(FreeObject),
  overrides: Type.Optional(FreeObject),
  contextKeys: Type.Optional(Type.Array(Type.String())),
  // Inbox state (in-app messages).
  archived: Type.Optional(Type.Boolean()),
  archivedAt: Type.Optional(Type.String()),
  firstSeenDate: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String())),
  severity: Type.Optional(StringEnum(SEVERITIES)),
  data: Type.Optional(FreeObject),
  avatar: Type.Optional(Type.String()),
  // Provider delivery reports (docs/provider-delivery-reports.md): the vendor's message id and its last reported state.
  identifier: Type.Optional(Type.String()),
  providerStatus: Type.Optional(StringEnum(PROVIDER_REPORTED_STATES)),
});

export const ListMessagesQuery = Type.Object({
  channel: Type.Optional(StringEnum(DELIVERY_CHANNELS)),
  subscriberId: Type.Optional(Type.String({ description: 'the external subscriberId' })),
  transactionId: Type.Optional(Type.Array(Type.String(), { description: 'repeat the parameter for several' })),
  contextKeys: Type.Optional(Type.Array(Type.String(), { description: 'exact set, order-insensitive; entries type:id' })),
  page: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 10 })),
});
export type ListMessagesQuery = Static<typeof ListMessagesQuery>;

/** Enough for any inbox action, and well inside the databases' bound-parameter limits. */
export const MARK_AS_MAX_IDS = 1000;

export const MessageActionParams = Type.Object({
  subscriberId: Type.String(),
  messageId: Type.String(),
  type: StringEnum(['primary', 'secondary'] as const),
});
export const MessageActionBody = Type.Object({
  status: StringEnum(['pending', 'done'] as const),
  payload: Type.Optional(FreeObject),
});

export const MarkAsBody = Type.Object({
  // One schema with two types, not anyOf: the app's coercion would otherwise unwrap one-element arrays.
  messageId: Type.Unsafe<string | string[]>({
    type: ['string', 'array'],
    minLength: 1,
    items: { type: 'string', minLength: 1 },
    minItems: 1,
    maxItems: MARK_AS_MAX_IDS,
    description: 'a message id or an array of them',
  }),
  markAs: StringEnum(MARK_AS_VALUES),
});
export type MarkAsBody = Static<typeof MarkAsBody>;

export const MarkAsParams = Type.Object({ subscriberId: Type.String() });
export const MessageParams = Type.Object({ messageId: Type.String() });

// ---- the legacy `@novu/node` inbox routes ----------------------------------------------------------------

/** `POST /v1/subscribers/{subscriberId}/messages/markAs`: the flags to set; at least one of them. */
export const LegacyMarkAsBody = Type.Object({
  messageId: MarkAsBody.properties.messageId,
  mark: Type.Object({ seen: Type.Optional(Type.Boolean()), read: Type.Optional(Type.Boolean()) }),
});

export const MarkAllBody = Type.Object({
  markAs: StringEnum(MARK_AS_VALUES),
  feedIdentifier: Type.Optional(
    Type.Unsafe<string | string[]>({ type: ['string', 'array'], items: { type: 'string' }, maxItems: 100, description: 'a feed identifier or several' }),
  ),
});

export const TransactionMessagesParams = Type.Object({ transactionId: Type.String({ minLength: 1 }) });
export const TransactionMessagesQuery = Type.Object({ channel: Type.Optional(StringEnum(DELIVERY_CHANNELS)) });
