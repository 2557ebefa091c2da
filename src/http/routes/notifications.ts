import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { callerOf } from '../auth.js';
import { DataEnvelope, IdempotencyHeaders, PageEnvelope, commonErrorResponses } from '../schemas/common.js';
import { ListNotificationsQuery, NotificationEventSchema, NotificationParams } from '../schemas/notification.js';
import { getNotification } from '../../usecases/notifications/get-notification.js';
import { listNotifications } from '../../usecases/notifications/list-notifications.js';
import { serializeNotificationPage } from '../notification-page-serializer.js';
import type { PageReaders } from '../../readers/reader-pool.js';

const tags = ['Notifications'];

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; readers?: PageReaders }> = async (app, { deps, readers }) => {
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
      const input = { caller: callerOf(request), ...filter, page, limit };
      // Embedded: read and written on a reader thread (src/readers/); the main thread reads what a thread could not.
      // Kept texts written as they are, the rest by the item schema's serializer: the bytes the response schema writes.
      const body = (await readers?.notificationPage(input)) ?? serializeNotificationPage(await listNotifications(deps, input));
      return reply.type('application/json; charset=utf-8').send(body);
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
