import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../usecases/deps.js';
import { countUnseen, getSubscriberFeed } from '../../usecases/inbox/subscriber-feed.js';
import { callerOf } from '../auth.js';
import { DataEnvelope, IdempotencyHeaders, PageEnvelope, commonErrorResponses } from '../schemas/common.js';
import { FeedItemSchema, FeedParams, FeedQuery, UnseenQuery } from '../schemas/event.js';

const tags = ['Inbox'];

export const inboxRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v1/subscribers/:subscriberId/notifications/feed',
    {
      schema: {
        tags,
        summary: "A subscriber's in-app feed, newest first",
        params: FeedParams,
        querystring: FeedQuery,
        headers: IdempotencyHeaders,
        response: { 200: PageEnvelope(FeedItemSchema, { totalCount: true }), ...commonErrorResponses },
      },
    },
    async (request) => {
      const { page = 0, limit = 10, read, seen } = request.query;
      return getSubscriberFeed(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId, page, limit, read, seen });
    },
  );

  app.get(
    '/v1/subscribers/:subscriberId/notifications/unseen',
    {
      schema: {
        tags,
        summary: "How many of a subscriber's in-app messages are unseen (or seen, with seen=true)",
        params: FeedParams,
        querystring: UnseenQuery,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Type.Object({ count: Type.Integer() })), ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: await countUnseen(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId, seen: request.query.seen }),
    }),
  );
};
