import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseEmptyJsonBodyAs } from '../empty-json-body.js';
import { Type } from '@sinclair/typebox';
import { marksOf } from '../../domain/legacy-mark.js';
import type { Deps } from '../../usecases/deps.js';
import { updateInboxNotifications } from '../../usecases/inbox/inbox-notifications.js';
import { listInboxPreferences, updateInboxGlobalPreference, updateInboxWorkflowPreferences } from '../../usecases/inbox/inbox-preferences.js';
import { createWidgetSession } from '../../usecases/widget/create-widget-session.js';
import {
  countWidgetMessages,
  getWidgetOrganization,
  listWidgetFeed,
  logWidgetUsage,
  markWidgetMessages,
  removeWidgetMessage,
  updateWidgetMessageAction,
} from '../../usecases/widget/widget-messages.js';
import { subscriberCallerOf } from '../auth.js';
import type { InboxReadCache } from '../inbox-read-cache.js';
import { commonErrorResponses, DataEnvelope, PageEnvelope } from '../schemas/common.js';
import { FeedItemSchema } from '../schemas/event.js';
import { toV1GlobalRow, toV1PreferenceRow, V1GlobalRow, V1PreferenceRow } from '../schemas/preference.js';
import {
  WidgetActionBody,
  WidgetActionParams,
  WidgetBulkDeleteBody,
  WidgetCount,
  WidgetCountQuery,
  WidgetFeedBody,
  WidgetFeedQuery,
  WidgetGlobalPreferenceBody,
  WidgetLegacyMarkBody,
  WidgetMarkAsBody,
  WidgetMessageParams,
  WidgetOrganization,
  WidgetPreferenceLevelParams,
  WidgetRemoveAllQuery,
  WidgetSessionBody,
  WidgetSessionResponse,
  WidgetUsageBody,
  WidgetWorkflowParams,
  WidgetWorkflowPreferenceBody,
} from '../schemas/widget.js';
import { answerWithReadCache } from './inbox-client.js';

const tags = ['Widget (legacy in-app clients)'];
const security = [{ SubscriberSession: [] }];
/** Every route but the session takes the subscriber token (the same token model as the Inbox; see http/auth.ts). */
const subscriberOnly = { subscriber: true } as const;
/** Novu's message record (the feed item), with `deleted` for the remove answer. */
const Message = Type.Object({ ...FeedItemSchema.properties, deleted: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

/**
 * `/v1/widgets/*`: what Novu's previous in-app widget calls (`@novu/notification-center`, `@novu/headless`, through
 * `@novu/client`; spec/widget-client-protocol.md). Thin routes over the Inbox's use-cases and a few of the widget's
 * own: every write is announced like an Inbox write (realtime events, the read cache). Statuses as Novu answers:
 * POSTs 201, except the bulk delete (200); the remove-all DELETE 204.
 */
export const widgetRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; readCache?: InboxReadCache }> = async (app, { deps, readCache }) => {
  // @novu/client sends `Content-Type: application/json` on every call: an empty body is no body here (this plugin only).
  parseEmptyJsonBodyAs(app, undefined);
  // The widget turns a store query's unset fields into `seen=undefined` (URLSearchParams of an object holding
  // undefined): such a value means "not given", not a 400.
  // A POST without a body (the mark-all calls with no feed) is an empty object, as Novu's body parser makes it.
  app.addHook('preValidation', (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (query) for (const [name, value] of Object.entries(query)) if (value === 'undefined' || value === 'null') delete query[name];
    if (request.body === undefined && (request.method === 'POST' || request.method === 'PATCH')) request.body = {};
    done();
  });

  app.post(
    '/v1/widgets/session/initialize',
    {
      // Public: the client may still send a stale `Authorization: Bearer` saved by an earlier visit; it is ignored.
      config: { public: true, inboxSession: true },
      schema: {
        tags,
        summary: 'Start a widget session for a subscriber (creates or updates it); answers the subscriber token',
        security: [],
        body: WidgetSessionBody,
        response: { 201: DataEnvelope(WidgetSessionResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.status(201).send({ data: await createWidgetSession(deps, request.body) }),
  );

  app.get(
    '/v1/widgets/notifications/feed',
    {
      config: subscriberOnly,
      schema: {
        tags,
        security,
        summary: "The subscriber's in-app messages by page, newest first",
        querystring: WidgetFeedQuery,
        response: { 200: PageEnvelope(Message, { totalCount: true }), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const caller = subscriberCallerOf(request);
      return answerWithReadCache(readCache, caller, request.url, reply, () => {
        const { page = 0, limit = 10, seen, read, feedIdentifier, payload } = request.query;
        return listWidgetFeed(deps, { caller, page, limit, seen, read, feeds: feedsOf(feedIdentifier), payload });
      });
    },
  );

  const count = (path: string, summary: string, defaults: { seen?: boolean; read?: boolean }) =>
    app.get(
      `/v1/widgets/notifications/${path}`,
      {
        config: subscriberOnly,
        schema: { tags, security, summary, querystring: WidgetCountQuery, response: { 200: DataEnvelope(WidgetCount), ...commonErrorResponses } },
      },
      async (request, reply) => {
        const caller = subscriberCallerOf(request);
        return answerWithReadCache(readCache, caller, request.url, reply, async () => {
          const { limit = 100, feedIdentifier } = request.query;
          // Novu: each route defaults its own flag to false; /count counts unseen when given neither.
          let { seen, read } = request.query;
          if (path === 'unseen') seen ??= defaults.seen;
          else if (path === 'unread') read ??= defaults.read;
          else if (seen === undefined && read === undefined) seen = defaults.seen;
          return { data: await countWidgetMessages(deps, { caller, limit, seen, read, feeds: feedsOf(feedIdentifier) }) };
        });
      },
    );
  count('unseen', 'How many in-app messages are unseen (seen=true: seen), at most limit', { seen: false });
  count('unread', 'How many in-app messages are unread (read=true: read), at most limit', { read: false });
  count('count', 'How many in-app messages match seen/read/feedIdentifier (unseen by default), at most limit', { seen: false });

  app.post(
    '/v1/widgets/messages/markAs',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Set seen and/or read on messages (the older name)', body: WidgetLegacyMarkBody, response: { 201: DataEnvelope(Type.Array(Message)), ...commonErrorResponses } },
    },
    async (request, reply) => {
      const { messageId, mark } = request.body;
      const data = await markWidgetMessages(deps, { caller: subscriberCallerOf(request), messageIds: idsOf(messageId), marks: marksOf(mark) });
      return reply.status(201).send({ data });
    },
  );

  app.post(
    '/v1/widgets/messages/mark-as',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Mark messages read, seen, unread or unseen', body: WidgetMarkAsBody, response: { 201: DataEnvelope(Type.Array(Message)), ...commonErrorResponses } },
    },
    async (request, reply) => {
      const { messageId, markAs } = request.body;
      const data = await markWidgetMessages(deps, { caller: subscriberCallerOf(request), messageIds: idsOf(messageId), marks: [markAs] });
      return reply.status(201).send({ data });
    },
  );

  const markAll = (path: 'read' | 'seen', summary: string) =>
    app.post(
      `/v1/widgets/messages/${path}`,
      {
        config: subscriberOnly,
        schema: { tags, security, summary, body: WidgetFeedBody, response: { 201: DataEnvelope(Type.Integer()), ...commonErrorResponses } },
      },
      async (request, reply) => {
        const feedId = request.body.feedId;
        const data = await updateInboxNotifications(deps, { caller: subscriberCallerOf(request), action: path, feeds: feedsOf(feedId === undefined ? undefined : [feedId].flat()) });
        return reply.status(201).send({ data });
      },
    );
  markAll('read', 'Mark every unread message read (of the given feeds); answers how many changed');
  markAll('seen', 'Mark every unseen message seen (of the given feeds); answers how many changed');

  app.delete(
    '/v1/widgets/messages/:messageId',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Remove one message', params: WidgetMessageParams, response: { 200: DataEnvelope(Message), ...commonErrorResponses } },
    },
    async (request) => ({ data: await removeWidgetMessage(deps, { caller: subscriberCallerOf(request), messageId: request.params.messageId }) }),
  );

  app.delete(
    '/v1/widgets/messages',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Remove every message (of one feed)', querystring: WidgetRemoveAllQuery, response: { 204: Type.Null(), ...commonErrorResponses } },
    },
    async (request, reply) => {
      const { feedId } = request.query;
      await updateInboxNotifications(deps, { caller: subscriberCallerOf(request), action: 'delete', feeds: feedId ? [feedId] : undefined });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/widgets/messages/bulk/delete',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Remove these messages (ids that are not the caller’s are ignored)', body: WidgetBulkDeleteBody, response: { 200: Type.Null(), ...commonErrorResponses } },
    },
    async (request, reply) => {
      await updateInboxNotifications(deps, { caller: subscriberCallerOf(request), action: 'delete', ids: request.body.messageIds });
      return reply.status(200).send(null);
    },
  );

  app.post(
    '/v1/widgets/messages/:messageId/actions/:type',
    {
      config: subscriberOnly,
      schema: {
        tags,
        security,
        summary: "Record a button's outcome (status, result payload) on the message",
        params: WidgetActionParams,
        body: WidgetActionBody,
        response: { 201: DataEnvelope(Message), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { messageId, type } = request.params;
      const data = await updateWidgetMessageAction(deps, { caller: subscriberCallerOf(request), messageId, type, status: request.body.status, payload: request.body.payload });
      return reply.status(201).send({ data });
    },
  );

  app.get(
    '/v1/widgets/organization',
    { config: subscriberOnly, schema: { tags, security, summary: "The subscriber's organization (no branding: the widget's defaults)", response: { 200: DataEnvelope(WidgetOrganization), ...commonErrorResponses } } },
    async (request) => ({ data: await getWidgetOrganization(deps, subscriberCallerOf(request)) }),
  );

  app.post(
    '/v1/widgets/usage/log',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Accepts the widget’s usage events (nothing is collected)', body: WidgetUsageBody, response: { 201: DataEnvelope(Type.Object({ success: Type.Boolean() })), ...commonErrorResponses } },
    },
    async (request, reply) => reply.status(201).send({ data: logWidgetUsage(deps, { caller: subscriberCallerOf(request), name: request.body.name }) }),
  );

  app.get(
    '/v1/widgets/preferences',
    { config: subscriberOnly, schema: { tags, security, summary: 'A row per active workflow', response: { 200: DataEnvelope(Type.Array(V1PreferenceRow)), ...commonErrorResponses } } },
    async (request) => {
      const view = await listInboxPreferences(deps, { caller: subscriberCallerOf(request), criticality: 'all' });
      return { data: view.workflows.map(toV1PreferenceRow) };
    },
  );

  app.get(
    '/v1/widgets/preferences/:level',
    {
      config: subscriberOnly,
      schema: {
        tags,
        security,
        summary: 'global: the one global row; template: a row per active workflow',
        params: WidgetPreferenceLevelParams,
        response: { 200: DataEnvelope(Type.Array(Type.Union([V1PreferenceRow, V1GlobalRow]))), ...commonErrorResponses },
      },
    },
    async (request) => {
      const view = await listInboxPreferences(deps, { caller: subscriberCallerOf(request), criticality: 'all' });
      return { data: request.params.level === 'global' ? [toV1GlobalRow(view.global)] : view.workflows.map(toV1PreferenceRow) };
    },
  );

  app.patch(
    '/v1/widgets/preferences/:templateId',
    {
      config: subscriberOnly,
      schema: {
        tags,
        security,
        summary: "Switch one channel (or the whole workflow) of one workflow (its _id, as the widget sends, or its identifier)",
        params: WidgetWorkflowParams,
        body: WidgetWorkflowPreferenceBody,
        response: { 200: DataEnvelope(V1PreferenceRow), ...commonErrorResponses },
      },
    },
    async (request) => {
      const { channel, enabled } = request.body;
      const [view] = await updateInboxWorkflowPreferences(deps, {
        caller: subscriberCallerOf(request),
        changes: [{ workflowId: request.params.templateId, channels: channel ? { [channel.type]: channel.enabled } : undefined, enabled }],
      });
      return { data: toV1PreferenceRow(view) };
    },
  );

  app.patch(
    '/v1/widgets/preferences',
    {
      config: subscriberOnly,
      schema: { tags, security, summary: 'Switch channels globally, or every channel (enabled)', body: WidgetGlobalPreferenceBody, response: { 200: DataEnvelope(V1GlobalRow), ...commonErrorResponses } },
    },
    async (request) => {
      const { enabled, preferences = [] } = request.body;
      const global = await updateInboxGlobalPreference(deps, {
        caller: subscriberCallerOf(request),
        channels: Object.fromEntries(preferences.map((preference) => [preference.type, preference.enabled])),
        enabled,
      });
      return { data: toV1GlobalRow(global) };
    },
  );
};

/** Feed identifiers as the clients send them: repeated, or one comma list (Novu splits it). */
function feedsOf(values: string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const feeds = values.flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value !== '');
  return feeds.length ? feeds : undefined;
}

function idsOf(messageId: string | string[]): string[] {
  return Array.isArray(messageId) ? messageId : messageId.split(',').filter((id) => id !== '');
}
