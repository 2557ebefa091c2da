import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { callerOf } from '../auth.js';
import { DataEnvelope, IdempotencyHeaders, PageEnvelope, commonErrorResponses } from '../schemas/common.js';
import { ListNotificationsQuery, NotificationEventSchema, NotificationParams } from '../schemas/notification.js';
import { getNotification } from '../../usecases/notifications/get-notification.js';
import { listNotifications } from '../../usecases/notifications/list-notifications.js';
import { serializeNotificationPage } from '../notification-page-serializer.js';

const tags = ['Notifications'];

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v1/notifications',
    {
      schema: {
        tags,
        summary: 'List notification events, newest first',
        description:
          'The filters combine with AND (each list filter is any-of). Herald extension: `status` (failed, pending, completed, ' +
          'canceled) selects events by the status of their jobs; Novu does not define it and Novu clients never send it.',
        querystring: ListNotificationsQuery,
        headers: IdempotencyHeaders,
        response: { 200: PageEnvelope(NotificationEventSchema), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { page = 0, limit = 10, ...filter } = request.query;
      const events = await listNotifications(deps, { caller: callerOf(request), ...filter, page, limit });
      // Kept texts written as they are, the rest by the item schema's serializer: the bytes the response schema writes.
      return reply.type('application/json; charset=utf-8').send(serializeNotificationPage(events));
    },
  );

  app.get(
    '/v1/notifications/:notificationId',
    {
      schema: {
        tags,
        summary: 'Retrieve a notification event with its jobs and execution details',
        params: NotificationParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(NotificationEventSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await getNotification(deps, { caller: callerOf(request), notificationId: request.params.notificationId }) }),
  );
};
