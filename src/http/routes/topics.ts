import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ValidationError } from '../../domain/errors.js';
import type { Deps } from '../../usecases/deps.js';
import { addTopicSubscriptions } from '../../usecases/topics/add-topic-subscriptions.js';
import { deleteTopic } from '../../usecases/topics/delete-topic.js';
import { getTopic } from '../../usecases/topics/get-topic.js';
import { listTopicSubscriptions } from '../../usecases/topics/list-topic-subscriptions.js';
import { listSubscriberSubscriptions } from '../../usecases/topics/list-subscriber-subscriptions.js';
import { getTopicSubscription } from '../../usecases/topics/get-topic-subscription.js';
import { listTopics } from '../../usecases/topics/list-topics.js';
import { removeTopicSubscriptions } from '../../usecases/topics/remove-topic-subscriptions.js';
import type { SubscriptionsOutcome } from '../../usecases/topics/subscription-outcome.js';
import { updateTopic } from '../../usecases/topics/update-topic.js';
import { upsertTopic } from '../../usecases/topics/upsert-topic.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope, IdempotencyHeaders } from '../schemas/common.js';
import {
  ListSubscriberSubscriptionsQuery,
  SubscriberSubscriptionsParams,
  SubscriptionDetailsResponse,
  SubscriptionParams,
  toSubscriptionDetailsResponse,
  ListSubscriptionsQuery,
  ListTopicsQuery,
  SubscriptionListResponse,
  SubscriptionsBody,
  SubscriptionsOutcomeResponse,
  TopicDeletedResponse,
  TopicListResponse,
  TopicParams,
  TopicResponse,
  UpdateTopicBody,
  UpsertTopicBody,
  UpsertTopicQuery,
  subscriberIdsOf,
  toSubscriptionResponse,
  toTopicResponse,
} from '../schemas/topic.js';

/** `/v2/topics` and their subscriptions, in Novu's shapes. The path key is the topic key. */
export const topicsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const tags = ['Topics'];

  app.post(
    '/v2/topics',
    {
      schema: {
        tags,
        summary: 'Create a topic, or rename the existing topic with this key (201 created, 200 updated)',
        body: UpsertTopicBody,
        querystring: UpsertTopicQuery,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(TopicResponse), 201: DataEnvelope(TopicResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { topic, created } = await upsertTopic(deps, {
        caller: callerOf(request),
        ...request.body,
        ...(request.query.failIfExists !== undefined ? { failIfExists: request.query.failIfExists } : {}),
      });
      return reply.status(created ? 201 : 200).send({ data: toTopicResponse(topic) });
    },
  );

  app.get(
    '/v2/topics',
    {
      schema: {
        tags,
        summary: 'List topics (oldest first; `key` exact, `name` substring)',
        querystring: ListTopicsQuery,
        headers: IdempotencyHeaders,
        response: { 200: TopicListResponse, ...commonErrorResponses },
      },
    },
    async (request) => {
      const { after, before, limit, key, name } = request.query;
      // Cursors are offsets into the ordered list; `before` asks for the page that ends there.
      const offset = after !== undefined ? Number(after) : before !== undefined ? Math.max(0, Number(before) - limit) : 0;
      const { topics, totalCount } = await listTopics(deps, {
        caller: callerOf(request),
        ...(key !== undefined ? { key } : {}),
        ...(name !== undefined ? { name } : {}),
        offset,
        limit,
      });
      return {
        data: topics.map(toTopicResponse),
        next: offset + topics.length < totalCount ? String(offset + topics.length) : null,
        previous: offset > 0 ? String(offset) : null,
        totalCount,
        totalCountCapped: false,
      };
    },
  );

  app.get(
    '/v2/topics/:topicKey',
    {
      schema: {
        tags,
        summary: 'Get a topic by key',
        params: TopicParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(TopicResponse), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: toTopicResponse(await getTopic(deps, { caller: callerOf(request), topicKey: request.params.topicKey })) }),
  );

  app.patch(
    '/v2/topics/:topicKey',
    {
      schema: {
        tags,
        summary: 'Rename a topic',
        params: TopicParams,
        body: UpdateTopicBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(TopicResponse), ...commonErrorResponses },
      },
    },
    async (request) => {
      const topic = await updateTopic(deps, { caller: callerOf(request), topicKey: request.params.topicKey, ...request.body });
      return { data: toTopicResponse(topic) };
    },
  );

  app.delete(
    '/v2/topics/:topicKey',
    {
      schema: {
        tags,
        summary: 'Delete a topic and its subscriptions',
        params: TopicParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(TopicDeletedResponse), ...commonErrorResponses },
      },
    },
    async (request) => {
      await deleteTopic(deps, { caller: callerOf(request), topicKey: request.params.topicKey });
      return { data: { acknowledged: true, status: 'deleted' } };
    },
  );

  const present = (outcome: SubscriptionsOutcome) => ({
    data: outcome.data.map(toSubscriptionResponse),
    meta: outcome.meta,
    errors: outcome.errors,
  });

  const requireSubscriberIds = (body: SubscriptionsBody): string[] => {
    const ids = subscriberIdsOf(body);
    if (ids.length === 0) throw new ValidationError(['subscriptions must contain at least one subscriberId']);
    if (ids.length > 100) throw new ValidationError(['subscriptions must contain at most 100 subscriberIds']);
    return ids;
  };

  app.post(
    '/v2/topics/:topicKey/subscriptions',
    {
      schema: {
        tags,
        summary: 'Subscribe subscribers to a topic (the topic is created when absent; unknown subscribers are reported in `errors`)',
        params: TopicParams,
        body: SubscriptionsBody,
        headers: IdempotencyHeaders,
        response: { 201: SubscriptionsOutcomeResponse, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const outcome = await addTopicSubscriptions(deps, {
        caller: callerOf(request),
        topicKey: request.params.topicKey,
        subscriberIds: requireSubscriberIds(request.body),
        ...(request.body.name !== undefined ? { name: request.body.name } : {}),
      });
      return reply.status(201).send(present(outcome));
    },
  );

  app.delete(
    '/v2/topics/:topicKey/subscriptions',
    {
      schema: {
        tags,
        summary: 'Unsubscribe subscribers from a topic',
        params: TopicParams,
        body: SubscriptionsBody,
        headers: IdempotencyHeaders,
        response: { 200: SubscriptionsOutcomeResponse, ...commonErrorResponses },
      },
    },
    async (request) => {
      const outcome = await removeTopicSubscriptions(deps, {
        caller: callerOf(request),
        topicKey: request.params.topicKey,
        subscriberIds: requireSubscriberIds(request.body),
      });
      return present(outcome);
    },
  );

  app.get(
    '/v2/topics/:topicKey/subscriptions',
    {
      schema: {
        tags,
        summary: "List a topic's subscriptions (creation order, cursor paging)",
        params: TopicParams,
        querystring: ListSubscriptionsQuery,
        headers: IdempotencyHeaders,
        response: { 200: SubscriptionListResponse, ...commonErrorResponses },
      },
    },
    async (request) => {
      const { after, limit, subscriberId } = request.query;
      const page = await listTopicSubscriptions(deps, {
        caller: callerOf(request),
        topicKey: request.params.topicKey,
        limit,
        ...(after !== undefined ? { after } : {}),
        ...(subscriberId !== undefined ? { subscriberId } : {}),
      });
      return { data: page.data.map(toSubscriptionResponse), next: page.next, previous: null, totalCount: page.totalCount, totalCountCapped: false };
    },
  );

  app.get(
    '/v2/topics/:topicKey/subscriptions/:identifier',
    {
      schema: {
        tags,
        summary: 'One subscription of a topic, by its identifier (`<topicKey>:<subscriberId>`)',
        params: SubscriptionParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(SubscriptionDetailsResponse), ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: toSubscriptionDetailsResponse(
        await getTopicSubscription(deps, { caller: callerOf(request), topicKey: request.params.topicKey, identifier: request.params.identifier }),
      ),
    }),
  );

  app.get(
    '/v2/subscribers/:subscriberId/subscriptions',
    {
      schema: {
        tags,
        summary: "A subscriber's topic subscriptions (creation order, cursor paging)",
        params: SubscriberSubscriptionsParams,
        querystring: ListSubscriberSubscriptionsQuery,
        headers: IdempotencyHeaders,
        response: { 200: SubscriptionListResponse, ...commonErrorResponses },
      },
    },
    async (request) => {
      const { after, before, limit, orderDirection, key, contextKeys } = request.query;
      const page = await listSubscriberSubscriptions(deps, {
        caller: callerOf(request),
        subscriberId: request.params.subscriberId,
        limit,
        ...(after !== undefined ? { after } : {}),
        ...(before !== undefined ? { before } : {}),
        ...(orderDirection !== undefined ? { orderDirection } : {}),
        ...(key !== undefined ? { key } : {}),
        ...(contextKeys !== undefined ? { contextKeys } : {}),
      });
      return { data: page.data.map(toSubscriptionResponse), next: page.next, previous: null, totalCount: page.totalCount, totalCountCapped: false };
    },
  );
};
