import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../usecases/deps.js';
import { addTopicSubscriptions } from '../../usecases/topics/add-topic-subscriptions.js';
import { deleteTopic } from '../../usecases/topics/delete-topic.js';
import { listTopics } from '../../usecases/topics/list-topics.js';
import { removeTopicSubscriptions } from '../../usecases/topics/remove-topic-subscriptions.js';
import { getTopicMembership, getTopicWithMembers, withMembers } from '../../usecases/topics/topic-members.js';
import { updateTopic } from '../../usecases/topics/update-topic.js';
import { upsertTopic } from '../../usecases/topics/upsert-topic.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope, IdempotencyHeaders } from '../schemas/common.js';
import {
  AddTopicMembersV1Response,
  CreatedTopicV1,
  CreateTopicV1Body,
  ListTopicsV1Query,
  RenameTopicV1Body,
  TopicListV1Body,
  TopicMemberParamsV1,
  TopicMembersV1Body,
  TopicMembershipV1,
  TopicParamsV1,
  TopicV1,
  toTopicMembershipV1,
  toTopicV1,
} from '../schemas/topic-v1.js';

const tags = ['Topics (v1)'];
const NoContent = Type.Null({ description: 'No content' });

/** Novu's v1 topic routes (the legacy `@novu/node` SDK), over the same topics and subscriptions as `/v2/topics`. */
export const topicsV1Routes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/v1/topics',
    {
      schema: {
        tags,
        summary: 'Create a topic (an existing key is renamed to this name)',
        body: CreateTopicV1Body,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(CreatedTopicV1), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { topic } = await upsertTopic(deps, { caller: callerOf(request), key: request.body.key, name: request.body.name });
      return reply.status(201).send({ data: { _id: topic._id, key: topic.key } });
    },
  );

  app.get(
    '/v1/topics',
    {
      schema: {
        tags,
        summary: 'List topics, oldest first (page / pageSize; `key` exact)',
        querystring: ListTopicsV1Query,
        headers: IdempotencyHeaders,
        response: { 200: TopicListV1Body, ...commonErrorResponses },
      },
    },
    async (request) => {
      const { page, pageSize, key } = request.query;
      const caller = callerOf(request);
      const { topics, totalCount } = await listTopics(deps, { caller, ...(key !== undefined ? { key } : {}), offset: page * pageSize, limit: pageSize });
      const data = (await withMembers(deps, caller, topics)).map(toTopicV1);
      return { data, page, pageSize, totalCount, hasMore: (page + 1) * pageSize < totalCount };
    },
  );

  app.get(
    '/v1/topics/:topicKey',
    {
      schema: {
        tags,
        summary: 'Get a topic with its subscribers',
        params: TopicParamsV1,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(TopicV1), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: toTopicV1(await getTopicWithMembers(deps, { caller: callerOf(request), topicKey: request.params.topicKey })) }),
  );

  app.patch(
    '/v1/topics/:topicKey',
    {
      schema: {
        tags,
        summary: 'Rename a topic',
        params: TopicParamsV1,
        body: RenameTopicV1Body,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(TopicV1), ...commonErrorResponses },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      await updateTopic(deps, { caller, topicKey: request.params.topicKey, name: request.body.name });
      return { data: toTopicV1(await getTopicWithMembers(deps, { caller, topicKey: request.params.topicKey })) };
    },
  );

  app.delete(
    '/v1/topics/:topicKey',
    {
      schema: {
        tags,
        summary: 'Delete a topic and its subscriptions (204)',
        params: TopicParamsV1,
        headers: IdempotencyHeaders,
        response: { 204: NoContent, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      await deleteTopic(deps, { caller: callerOf(request), topicKey: request.params.topicKey });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v1/topics/:topicKey/subscribers',
    {
      schema: {
        tags,
        summary: 'Add subscribers to a topic (created when absent); unknown subscriberIds are listed in failed.notFound',
        params: TopicParamsV1,
        body: TopicMembersV1Body,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(AddTopicMembersV1Response), ...commonErrorResponses },
      },
    },
    async (request) => {
      const outcome = await addTopicSubscriptions(deps, {
        caller: callerOf(request),
        topicKey: request.params.topicKey,
        subscriberIds: request.body.subscribers,
      });
      const notFound = outcome.errors.map((error) => error.subscriberId);
      const missing = new Set(notFound);
      const succeeded = [...new Set(request.body.subscribers)].filter((subscriberId) => !missing.has(subscriberId));
      return { data: { succeeded, failed: { notFound } } };
    },
  );

  app.post(
    '/v1/topics/:topicKey/subscribers/removal',
    {
      schema: {
        tags,
        summary: 'Remove subscribers from a topic (204; subscribers not in it are ignored)',
        params: TopicParamsV1,
        body: TopicMembersV1Body,
        headers: IdempotencyHeaders,
        response: { 204: NoContent, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      await removeTopicSubscriptions(deps, { caller: callerOf(request), topicKey: request.params.topicKey, subscriberIds: request.body.subscribers });
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v1/topics/:topicKey/subscribers/:subscriberId',
    {
      schema: {
        tags,
        summary: "A subscriber's membership of a topic (404 when not a member)",
        params: TopicMemberParamsV1,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(TopicMembershipV1), ...commonErrorResponses },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const subscription = await getTopicMembership(deps, { caller, ...request.params });
      return { data: toTopicMembershipV1(subscription, caller.organizationId) };
    },
  );
};
