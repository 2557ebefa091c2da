import { Type, type Static } from '@sinclair/typebox';
import type { InboxFilter } from '../../domain/inbox.js';
import { FreeObject } from './common.js';
import { bulkFilterOf, ListQuery } from './inbox-client.js';

/**
 * `/v2/subscribers/{subscriberId}/notifications/*` (`@novu/api` `subscribers.notifications.*`): the Inbox's list,
 * count and actions called server-side with an API key, in the Inbox's shapes (InboxNotificationDto,
 * GetSubscriberNotificationsResponseDto, GetSubscriberNotificationsCountResponseDto) plus `contextKeys`.
 */

const ContextKeys = Type.Array(Type.String(), { description: 'exact set, order-insensitive; entries type:id' });

export const SubscriberNotificationsParams = Type.Object({ subscriberId: Type.String() });
export const SubscriberNotificationParams = Type.Object({ subscriberId: Type.String(), notificationId: Type.String() });
export const SubscriberNotificationActionParams = Type.Object({
  subscriberId: Type.String(),
  notificationId: Type.String(),
  actionType: Type.Union([Type.Literal('primary'), Type.Literal('secondary')]),
});

export const SubscriberNotificationsListQuery = Type.Object(
  { ...ListQuery.properties, contextKeys: Type.Optional(ContextKeys) },
  // The Inbox's AND form of tags arrives as raw keys (see ListQuery).
  { additionalProperties: true },
);

export const ContextKeysQuery = Type.Object({ contextKeys: Type.Optional(ContextKeys) });

export const SubscriberNotificationsCountQuery = Type.Object({
  filters: Type.String({ description: 'a JSON array of at most 30 filter objects {tags, read, archived, snoozed, seen, data, severity, createdGte, createdLte}' }),
});

/** The bulk bodies (UpdateAllSubscriberNotificationsDto, MarkSubscriberNotificationsAsSeenDto); `data` is JSON text. */
export const UpdateAllBody = Type.Object({
  tags: Type.Optional(Type.Unknown()),
  data: Type.Optional(Type.Union([Type.String(), FreeObject])),
  contextKeys: Type.Optional(ContextKeys),
});
export type UpdateAllBody = Static<typeof UpdateAllBody>;

export const MarkSeenBody = Type.Object({
  ...UpdateAllBody.properties,
  notificationIds: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
});

/** A bulk body's filter: `tags` and `data` read as the Inbox's bulk bodies are (bulkFilterOf), plus `contextKeys`. */
export function updateAllFilterOf(body: UpdateAllBody | undefined): { tags: InboxFilter['tags']; data: InboxFilter['data']; contextKeys?: string[] } {
  return { ...bulkFilterOf(body), ...(body?.contextKeys !== undefined ? { contextKeys: body.contextKeys } : {}) };
}
