import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../usecases/deps.js';
import type { BulkInboxAction, InboxActionInput } from '../../usecases/inbox/inbox-notifications.js';
import { countSubscriberNotifications } from '../../usecases/subscriber-notifications/count-subscriber-notifications.js';
import { deleteSubscriberNotification } from '../../usecases/subscriber-notifications/delete-subscriber-notification.js';
import { listSubscriberNotifications } from '../../usecases/subscriber-notifications/list-subscriber-notifications.js';
import { updateSubscriberNotification } from '../../usecases/subscriber-notifications/update-subscriber-notification.js';
import { updateSubscriberNotifications } from '../../usecases/subscriber-notifications/update-subscriber-notifications.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope, IdempotencyHeaders } from '../schemas/common.js';
import { countFiltersOf, CountResponse, InboxNotificationSchema, listFilterOf, ListResponse, SnoozeBody, toInboxNotification } from '../schemas/inbox-client.js';
import {
  ContextKeysQuery,
  MarkSeenBody,
  SubscriberNotificationActionParams,
  SubscriberNotificationParams,
  SubscriberNotificationsCountQuery,
  SubscriberNotificationsListQuery,
  SubscriberNotificationsParams,
  UpdateAllBody,
  updateAllFilterOf,
} from '../schemas/subscriber-notification.js';

const tags = ['Subscriber notifications'];

/**
 * `/v2/subscribers/{subscriberId}/notifications/*`: a server (API key) doing what the subscriber's Inbox does, with the
 * same use-cases and shapes as `/v1/inbox/*` (inbox-client.ts). Single actions answer the notification (200), bulk
 * actions and the delete 204, as Novu does. An unknown subscriber, or one of another environment: 404.
 */
export const subscriberNotificationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v2/subscribers/:subscriberId/notifications',
    {
      schema: {
        tags,
        summary: "A subscriber's in-app notifications, newest first (the Inbox's list and filters)",
        params: SubscriberNotificationsParams,
        querystring: SubscriberNotificationsListQuery,
        headers: IdempotencyHeaders,
        response: { 200: ListResponse, ...commonErrorResponses },
      },
    },
    async (request) => {
      const query = request.query as typeof request.query & Record<string, unknown>;
      const { filter, echo } = listFilterOf(query);
      if (query.contextKeys !== undefined) {
        filter.contextKeys = query.contextKeys;
        echo.contextKeys = query.contextKeys;
      }
      const page = await listSubscriberNotifications(deps, {
        caller: callerOf(request),
        subscriberId: request.params.subscriberId,
        filter,
        after: query.after,
        offset: query.offset ?? 0,
        limit: query.limit ?? 10,
      });
      return { data: page.data.map(toInboxNotification), hasMore: page.hasMore, filter: echo };
    },
  );

  app.get(
    '/v2/subscribers/:subscriberId/notifications/count',
    {
      schema: {
        tags,
        summary: "Counts of a subscriber's in-app notifications, one per filter, each filter echoed",
        params: SubscriberNotificationsParams,
        querystring: SubscriberNotificationsCountQuery,
        headers: IdempotencyHeaders,
        response: { 200: CountResponse, ...commonErrorResponses },
      },
    },
    async (request) => {
      const filters = countFiltersOf({ filters: request.query.filters });
      const counts = await countSubscriberNotifications(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId, filters: filters.map((f) => f.filter) });
      return { data: filters.map((f, index) => ({ count: counts[index], filter: f.echo })) };
    },
  );

  const single = (path: string, summary: string, toAction: (request: { params: Record<string, string>; body: unknown }) => InboxActionInput, body?: typeof SnoozeBody) =>
    app.patch(
      `/v2/subscribers/:subscriberId/notifications/:notificationId/${path}`,
      {
        schema: {
          tags,
          summary,
          params: path.startsWith('actions/') ? SubscriberNotificationActionParams : SubscriberNotificationParams,
          querystring: ContextKeysQuery,
          ...(body ? { body } : {}),
          headers: IdempotencyHeaders,
          response: { 200: DataEnvelope(InboxNotificationSchema), ...commonErrorResponses },
        },
      },
      async (request) => {
        const params = request.params as Record<string, string>;
        const message = await updateSubscriberNotification(deps, {
          caller: callerOf(request),
          subscriberId: params.subscriberId,
          notificationId: params.notificationId,
          action: toAction({ params, body: request.body }),
          contextKeys: request.query.contextKeys,
        });
        return { data: toInboxNotification(message) };
      },
    );
  single('read', 'Mark one notification read (and seen)', () => ({ type: 'read' }));
  single('unread', 'Mark one notification unread', () => ({ type: 'unread' }));
  single('archive', 'Archive one notification (and mark it read)', () => ({ type: 'archive' }));
  single('unarchive', 'Unarchive one notification', () => ({ type: 'unarchive' }));
  single('snooze', 'Snooze one notification until a time (at most maxSnoozeDurationHours ahead)', ({ body }) => ({ type: 'snooze', until: (body as { snoozeUntil: string }).snoozeUntil }), SnoozeBody);
  single('unsnooze', 'End the snooze of one notification now', () => ({ type: 'unsnooze' }));
  single('actions/:actionType/complete', 'Complete the primary or secondary action', ({ params }) => ({ type: 'complete', actionType: params.actionType as 'primary' | 'secondary' }));
  single('actions/:actionType/revert', 'Revert a completed action to pending', ({ params }) => ({ type: 'revert', actionType: params.actionType as 'primary' | 'secondary' }));

  app.delete(
    '/v2/subscribers/:subscriberId/notifications/:notificationId',
    {
      schema: {
        tags,
        summary: 'Delete one in-app notification of the subscriber (soft delete); 204',
        params: SubscriberNotificationParams,
        querystring: ContextKeysQuery,
        headers: IdempotencyHeaders,
        response: { 204: Type.Null({ description: 'Deleted' }), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      await deleteSubscriberNotification(deps, {
        caller: callerOf(request),
        subscriberId: request.params.subscriberId,
        notificationId: request.params.notificationId,
        contextKeys: request.query.contextKeys,
      });
      return reply.status(204).send(null);
    },
  );

  const bulk = (path: string, action: BulkInboxAction, summary: string) =>
    app.post(
      `/v2/subscribers/:subscriberId/notifications/${path}`,
      {
        schema: {
          tags,
          summary,
          params: SubscriberNotificationsParams,
          body: action === 'seen' ? MarkSeenBody : UpdateAllBody,
          headers: IdempotencyHeaders,
          response: { 204: Type.Null(), ...commonErrorResponses },
        },
      },
      async (request, reply) => {
        const body = request.body as (typeof request.body & { notificationIds?: string[] }) | undefined;
        await updateSubscriberNotifications(deps, {
          caller: callerOf(request),
          subscriberId: request.params.subscriberId,
          action,
          ...(action === 'seen' && body?.notificationIds !== undefined ? { ids: body.notificationIds } : {}),
          ...updateAllFilterOf(body),
        });
        return reply.status(204).send(null);
      },
    );
  bulk('seen', 'seen', 'Mark these notifications (notificationIds), or all matching tags/data/contextKeys, seen');
  bulk('read', 'read', 'Mark all matching notifications read');
  bulk('archive', 'archive', 'Archive all matching notifications');
  bulk('read-archive', 'read-archive', 'Archive all matching notifications that are read');
  bulk('delete', 'delete', 'Delete all matching notifications');
};
