import { Type } from '@sinclair/typebox';
import { DELIVERY_CHANNELS } from '../../domain/types.js';
import { FreeObject } from './common.js';
import { StringEnum } from './message.js';

/**
 * The older in-app widget's wire format (`/v1/widgets/*`, widget-client-protocol.md): what @novu/client 2.x sends and
 * reads. Bodies follow Novu's DTOs; unknown fields are dropped, wrong types are 400s.
 */

const OptionalText = Type.Optional(Type.String({ maxLength: 1000 }));

export const WidgetSessionBody = Type.Object({
  applicationIdentifier: Type.String({ maxLength: 200 }),
  subscriberId: Type.String({ maxLength: 500 }),
  hmacHash: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  firstName: OptionalText,
  lastName: OptionalText,
  email: OptionalText,
  phone: OptionalText,
});

export const WidgetSessionResponse = Type.Object({
  token: Type.String(),
  profile: Type.Object({
    _id: Type.String(),
    firstName: Type.Union([Type.String(), Type.Null()]),
    lastName: Type.Union([Type.String(), Type.Null()]),
    phone: Type.Union([Type.String(), Type.Null()]),
  }),
});

/** One feed identifier, several (repeated), or a comma list. */
const FeedIdentifiers = Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 }));

export const WidgetFeedQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  seen: Type.Optional(Type.Boolean()),
  read: Type.Optional(Type.Boolean()),
  feedIdentifier: FeedIdentifiers,
  payload: Type.Optional(Type.String({ maxLength: 8192, description: 'base64 of a JSON object, matched partially against the trigger payload' })),
});

export const WidgetCountQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 100 })),
  seen: Type.Optional(Type.Boolean()),
  read: Type.Optional(Type.Boolean()),
  feedIdentifier: FeedIdentifiers,
});

export const WidgetCount = Type.Object({ count: Type.Integer() });

const MessageIds = Type.Union([Type.String({ maxLength: 100 }), Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 100 })]);

export const WidgetLegacyMarkBody = Type.Object({
  messageId: MessageIds,
  mark: Type.Object({ seen: Type.Optional(Type.Boolean()), read: Type.Optional(Type.Boolean()) }),
});

export const WidgetMarkAsBody = Type.Object({
  messageId: MessageIds,
  markAs: StringEnum(['read', 'seen', 'unread', 'unseen'] as const),
});

export const WidgetFeedBody = Type.Object({
  feedId: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 })])),
});

export const WidgetRemoveAllQuery = Type.Object({ feedId: Type.Optional(Type.String({ maxLength: 200 })) });

export const WidgetBulkDeleteBody = Type.Object({ messageIds: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 100 }) });

export const WidgetMessageParams = Type.Object({ messageId: Type.String() });

export const WidgetActionParams = Type.Object({ messageId: Type.String(), type: StringEnum(['primary', 'secondary'] as const) });

export const WidgetActionBody = Type.Object({
  executedType: Type.Optional(Type.String()),
  status: StringEnum(['pending', 'done'] as const),
  payload: Type.Optional(FreeObject),
});

export const WidgetOrganization = Type.Object({ _id: Type.String(), name: Type.String(), branding: FreeObject });

export const WidgetUsageBody = Type.Object({ name: Type.String({ maxLength: 500 }), payload: Type.Optional(FreeObject) });

export const WidgetPreferenceLevelParams = Type.Object({ level: StringEnum(['global', 'template'] as const) });

export const WidgetWorkflowParams = Type.Object({ templateId: Type.String({ maxLength: 200 }) });

const ChannelSwitch = Type.Object({ type: StringEnum(DELIVERY_CHANNELS), enabled: Type.Boolean() });

export const WidgetWorkflowPreferenceBody = Type.Object({ channel: Type.Optional(ChannelSwitch), enabled: Type.Optional(Type.Boolean()) });

/** @novu/client also sends each entry's `channelType` (the same value as `type`): dropped. */
export const WidgetGlobalPreferenceBody = Type.Object({ enabled: Type.Optional(Type.Boolean()), preferences: Type.Optional(Type.Array(ChannelSwitch, { maxItems: 10 })) });
