import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { callerOf } from '../auth.js';
import { Acknowledged, DataEnvelope, IdempotencyHeaders, commonErrorResponses } from '../schemas/common.js';
import {
  BulkSubscribersBody,
  BulkSubscribersReport,
  CreateSubscriberBody,
  ListSubscribersV1Query,
  SubscriberListV1Body,
  SubscriberParams,
  SubscriberSchema,
  UpdateSubscriberV1Body,
} from '../schemas/subscriber.js';
import { bulkUpsertSubscribers } from '../../usecases/subscribers/bulk-upsert-subscribers.js';
import { createSubscriber } from '../../usecases/subscribers/create-subscriber.js';
import { deleteSubscriber } from '../../usecases/subscribers/delete-subscriber.js';
import { getSubscriber } from '../../usecases/subscribers/get-subscriber.js';
import { listSubscribers } from '../../usecases/subscribers/list-subscribers.js';
import { updateSubscriber } from '../../usecases/subscribers/update-subscriber.js';

const tags = ['Subscribers (v1)'];

/**
 * Novu's v1 subscriber routes, which the legacy `@novu/node` SDK calls (identify, list, get, update, delete, bulk).
 * They share the v2 use-cases; only the shapes differ (offset pages, PUT for update).
 */
export const subscribersV1Routes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/v1/subscribers',
    {
      schema: {
        tags,
        summary: 'Identify: create a subscriber, or update the one with this subscriberId',
        body: CreateSubscriberBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(SubscriberSchema), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const subscriber = await createSubscriber(deps, { caller: callerOf(request), ...request.body });
      return reply.status(201).send({ data: subscriber });
    },
  );

  app.get(
    '/v1/subscribers',
    {
      schema: {
        tags,
        summary: 'List subscribers, newest first (page / limit)',
        querystring: ListSubscribersV1Query,
        headers: IdempotencyHeaders,
        response: { 200: SubscriberListV1Body, ...commonErrorResponses },
      },
    },
    async (request) => listSubscribers(deps, { caller: callerOf(request), page: request.query.page, limit: request.query.limit }),
  );

  app.post(
    '/v1/subscribers/bulk',
    {
      schema: {
        tags,
        summary: 'Create or update up to 500 subscribers; reports which were created, updated or failed',
        body: BulkSubscribersBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(BulkSubscribersReport), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const report = await bulkUpsertSubscribers(deps, { caller: callerOf(request), subscribers: request.body.subscribers });
      return reply.status(201).send({ data: report });
    },
  );

  app.get(
    '/v1/subscribers/:subscriberId',
    {
      schema: {
        tags,
        summary: 'Retrieve a subscriber',
        params: SubscriberParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(SubscriberSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await getSubscriber(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId }) }),
  );

  app.put(
    '/v1/subscribers/:subscriberId',
    {
      schema: {
        tags,
        summary: 'Update a subscriber (fields sent are set, null clears, absent unchanged)',
        params: SubscriberParams,
        body: UpdateSubscriberV1Body,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(SubscriberSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: await updateSubscriber(deps, { caller: callerOf(request), ...request.body, subscriberId: request.params.subscriberId }),
    }),
  );

  app.delete(
    '/v1/subscribers/:subscriberId',
    {
      schema: {
        tags,
        summary: 'Delete a subscriber',
        params: SubscriberParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Acknowledged), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await deleteSubscriber(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId }) }),
  );
};
