import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseEmptyJsonBodyAs } from '../empty-json-body.js';
import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../usecases/deps.js';
import { createInboxSession } from '../../usecases/inbox/create-inbox-session.js';
import {
  countInboxNotifications,
  deleteInboxNotification,
  listInboxNotifications,
  updateInboxNotification,
  updateInboxNotifications,
  type BulkInboxAction,
  type InboxActionInput,
} from '../../usecases/inbox/inbox-notifications.js';
import { subscriberCallerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope } from '../schemas/common.js';
import {
  ActionBody,
  BulkBody,
  bulkFilterOf,
  CountQuery,
  countFiltersOf,
  CountResponse,
  InboxNotificationSchema,
  ListQuery,
  listFilterOf,
  ListResponse,
  NotificationParams,
  SessionBody,
  SessionResponse,
  SnoozeBody,
  toInboxNotification,
  BulkPreferencesBody,
  channelSwitchesOf,
  InboxPreferenceSchema,
  PreferenceChannelsBody,
  PreferenceParams,
  PreferencesQuery,
  toGlobalPreference,
  toWorkflowPreference,
} from '../schemas/inbox-client.js';
import { listInboxPreferences, updateInboxGlobalPreference, updateInboxWorkflowPreferences } from '../../usecases/inbox/inbox-preferences.js';
import type { DeliverySchedule } from '../../domain/delivery-schedule.js';
import type { SubscriberCaller } from '../../domain/types.js';
import type { InboxReadCache } from '../inbox-read-cache.js';

const tags = ['Inbox (browser clients)'];
const security = [{ SubscriberSession: [] }];
/** Every route but the session takes the subscriber token from the session (see http/auth.ts). */
const subscriberOnly = { subscriber: true } as const;

/**
 * `/v1/inbox/*`: what @novu/js and <Inbox /> call from the browser (spec/inbox-client-protocol.md). The list and the
 * count answer unwrapped bodies, the single-notification PATCHes the updated notification, the bulk POSTs 204.
 */
export const inboxClientRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; readCache?: InboxReadCache }> = async (app, { deps, readCache }) => {
  // The clients send `Content-Type: application/json` on every call, also the PATCHes without a body: here (this
  // plugin only) an empty JSON body is no body, not a 400. Anything else goes through Fastify's own JSON parser.
  parseEmptyJsonBodyAs(app, undefined);

  app.post(
    '/v1/inbox/session',
    {
      config: { public: true, inboxSession: true },
      schema: {
        tags,
        summary: 'Start an Inbox session for a subscriber (creates or updates it); answers the subscriber token',
        security: [],
        body: SessionBody,
        response: { 201: DataEnvelope(SessionResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { applicationIdentifier, subscriber, subscriberHash } = request.body;
      const session = await createInboxSession(deps, { applicationIdentifier, subscriber, subscriberHash });
      return reply.status(201).send({ data: session });
    },
  );

  app.get(
    '/v1/inbox/notifications',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: "The subscriber's notifications, newest first", querystring: ListQuery, response: { 200: ListResponse, ...commonErrorResponses } },
    },
    async (request, reply) => {
      const caller = subscriberCallerOf(request);
      return answerWithReadCache(readCache, caller, request.url, reply, async () => {
        const query = request.query as typeof request.query & Record<string, unknown>;
        const { filter, echo } = listFilterOf(query);
        const page = await listInboxNotifications(deps, { caller, filter, after: query.after, offset: query.offset ?? 0, limit: query.limit ?? 10 });
        return { data: page.data.map(toInboxNotification), hasMore: page.hasMore, filter: echo };
      });
    },
  );

  app.get(
    '/v1/inbox/notifications/count',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Counts per filter, each filter echoed', querystring: CountQuery, response: { 200: CountResponse, ...commonErrorResponses } },
    },
    async (request, reply) => {
      const caller = subscriberCallerOf(request);
      return answerWithReadCache(readCache, caller, request.url, reply, async () => {
        const filters = countFiltersOf(request.query);
        const counts = await countInboxNotifications(deps, { caller, filters: filters.map((f) => f.filter) });
        return { data: filters.map((f, index) => ({ count: counts[index], filter: f.echo })) };
      });
    },
  );

  const single = (path: string, summary: string, toAction: (body: unknown) => InboxActionInput, body?: typeof SnoozeBody | typeof ActionBody) =>
    app.patch(
      `/v1/inbox/notifications/:id/${path}`,
      {
        config: subscriberOnly,
        schema: { tags, security, summary, params: NotificationParams, ...(body ? { body } : {}), response: { 200: DataEnvelope(InboxNotificationSchema), ...commonErrorResponses } },
      },
      async (request) => {
        const message = await updateInboxNotification(deps, { caller: subscriberCallerOf(request), id: request.params.id, action: toAction(request.body) });
        return { data: toInboxNotification(message) };
      },
    );
  single('read', 'Mark read (and seen)', () => ({ type: 'read' }));
  single('unread', 'Mark unread', () => ({ type: 'unread' }));
  single('seen', 'Mark seen', () => ({ type: 'seen' }));
  single('archive', 'Archive (and mark read)', () => ({ type: 'archive' }));
  single('unarchive', 'Unarchive', () => ({ type: 'unarchive' }));
  single('snooze', 'Snooze until a time (at most maxSnoozeDurationHours ahead)', (body) => ({ type: 'snooze', until: (body as { snoozeUntil: string }).snoozeUntil }), SnoozeBody);
  single('unsnooze', 'End a snooze now', () => ({ type: 'unsnooze' }));
  single('complete', 'Complete the primary or secondary action', (body) => ({ type: 'complete', actionType: (body as { actionType: 'primary' | 'secondary' }).actionType }), ActionBody);
  single('revert', 'Revert a completed action to pending', (body) => ({ type: 'revert', actionType: (body as { actionType: 'primary' | 'secondary' }).actionType }), ActionBody);

  const bulk = (path: string, action: BulkInboxAction, summary: string) =>
    app.post(
      `/v1/inbox/notifications/${path}`,
      {
        config: subscriberOnly,
        schema: { tags, security, summary, body: BulkBody, response: { 204: Type.Null(), ...commonErrorResponses } },
      },
      async (request, reply) => {
        const body = request.body;
        const ids = action === 'seen' ? body.notificationIds : undefined;
        await updateInboxNotifications(deps, { caller: subscriberCallerOf(request), action, ids, ...bulkFilterOf(body) });
        return reply.status(204).send(null);
      },
    );
  bulk('seen', 'seen', 'Mark these notifications (notificationIds), or all matching tags/data, seen');
  bulk('read', 'read', 'Mark all matching notifications read');
  bulk('archive', 'archive', 'Archive all matching notifications');
  bulk('read-archive', 'read-archive', 'Archive all matching notifications that are read');
  bulk('delete', 'delete', 'Delete all matching notifications');

  app.get(
    '/v1/inbox/preferences',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'The global preference and one per workflow', querystring: PreferencesQuery, response: { 200: DataEnvelope(Type.Array(InboxPreferenceSchema)), ...commonErrorResponses } },
    },
    async (request) => {
      const view = await listInboxPreferences(deps, { caller: subscriberCallerOf(request), ...request.query });
      return { data: [toGlobalPreference(view.global), ...view.workflows.map(toWorkflowPreference)] };
    },
  );

  app.get(
    '/v1/inbox/preferences/global',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'The global preference (with the schedule)', response: { 200: DataEnvelope(InboxPreferenceSchema), ...commonErrorResponses } },
    },
    async (request) => {
      const view = await listInboxPreferences(deps, { caller: subscriberCallerOf(request), criticality: 'nonCritical' });
      return { data: toGlobalPreference(view.global) };
    },
  );

  app.patch(
    '/v1/inbox/preferences',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Switch channels globally, or set the schedule', body: PreferenceChannelsBody, response: { 200: DataEnvelope(InboxPreferenceSchema), ...commonErrorResponses } },
    },
    async (request) => {
      const body = request.body as Record<string, unknown>;
      const global = await updateInboxGlobalPreference(deps, {
        caller: subscriberCallerOf(request),
        channels: channelSwitchesOf(body),
        schedule: body.schedule as DeliverySchedule | null | undefined,
      });
      return { data: toGlobalPreference(global) };
    },
  );

  app.patch(
    '/v1/inbox/preferences/bulk',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Switch channels of several workflows', body: BulkPreferencesBody, response: { 200: DataEnvelope(Type.Array(InboxPreferenceSchema)), ...commonErrorResponses } },
    },
    async (request) => {
      const changes = request.body.preferences.map((preference) => ({ workflowId: preference.workflowId, channels: channelSwitchesOf(preference) }));
      const views = await updateInboxWorkflowPreferences(deps, { caller: subscriberCallerOf(request), changes, fieldPath: 'preferences' });
      return { data: views.map(toWorkflowPreference) };
    },
  );

  app.patch(
    '/v1/inbox/preferences/:workflowIdOrIdentifier',
    {
      config: subscriberOnly,
      schema: {
        tags,
        security,
        summary: "Switch channels of one workflow (its id, as the client sends, or its identifier)",
        params: PreferenceParams,
        body: PreferenceChannelsBody,
        response: { 200: DataEnvelope(InboxPreferenceSchema), ...commonErrorResponses },
      },
    },
    async (request) => {
      const [view] = await updateInboxWorkflowPreferences(deps, {
        caller: subscriberCallerOf(request),
        changes: [{ workflowId: request.params.workflowIdOrIdentifier, channels: channelSwitchesOf(request.body as Record<string, unknown>) }],
      });
      return { data: toWorkflowPreference(view) };
    },
  );

  app.delete(
    '/v1/inbox/notifications/:id/delete',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Delete one notification', params: NotificationParams, response: { 204: Type.Null(), ...commonErrorResponses } },
    },
    async (request, reply) => {
      await deleteInboxNotification(deps, { caller: subscriberCallerOf(request), id: request.params.id });
      return reply.status(204).send(null);
    },
  );
};

const JSON_UTF8 = 'application/json; charset=utf-8';

/**
 * A read route's 200 answer: the kept bytes when the subscriber's Inbox has not changed since they were read,
 * otherwise `read()` serialized by the route's own response schema (and kept). Errors are thrown as usual, never kept.
 */
export async function answerWithReadCache(
  cache: InboxReadCache | undefined,
  caller: SubscriberCaller,
  url: string,
  reply: FastifyReply,
  read: () => Promise<unknown>,
): Promise<FastifyReply> {
  if (!cache) return reply.send(await read());
  const kept = cache.get(caller, url);
  if (kept !== undefined) return reply.type(JSON_UTF8).send(kept);
  const ticket = cache.begin();
  const serialized = reply.serialize(await read());
  const body = typeof serialized === 'string' ? serialized : Buffer.from(serialized as Uint8Array).toString('utf8');
  cache.set(caller, url, ticket, body);
  return reply.type(JSON_UTF8).send(body);
}
