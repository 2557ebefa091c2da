import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ValidationError } from '../../domain/errors.js';
import type { Deps } from '../../usecases/deps.js';
import { callerOf } from '../auth.js';
import { Acknowledged, DataEnvelope, IdempotencyHeaders, commonErrorResponses } from '../schemas/common.js';
import {
  CreateSubscriberBody,
  CreateSubscriberQuery,
  ListSubscribersQuery,
  OnlineStatusBody,
  PatchSubscriberBody,
  SubscriberListBody,
  SubscriberParams,
  SubscriberSchema,
} from '../schemas/subscriber.js';
import { createSubscriber } from '../../usecases/subscribers/create-subscriber.js';
import { deleteSubscriber } from '../../usecases/subscribers/delete-subscriber.js';
import { getSubscriber } from '../../usecases/subscribers/get-subscriber.js';
import { listSubscribers } from '../../usecases/subscribers/list-subscribers.js';
import { updateSubscriber } from '../../usecases/subscribers/update-subscriber.js';
import { updateSubscriberOnlineStatus } from '../../usecases/subscribers/update-subscriber-online-status.js';

const tags = ['Subscribers'];

export const subscribersRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/v2/subscribers',
    {
      schema: {
        tags,
        summary: 'Create a subscriber, or update the one with this subscriberId',
        querystring: CreateSubscriberQuery,
        body: CreateSubscriberBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(SubscriberSchema), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const subscriber = await createSubscriber(deps, { caller: callerOf(request), ...request.body, failIfExists: request.query.failIfExists });
      return reply.status(201).send({ data: subscriber });
    },
  );

  app.get(
    '/v2/subscribers',
    {
      schema: {
        tags,
        summary: 'List subscribers, newest first',
        querystring: ListSubscribersQuery,
        headers: IdempotencyHeaders,
        response: { 200: SubscriberListBody, ...commonErrorResponses },
      },
    },
    async (request) => {
      const { page = 0, limit = 10, orderBy: _creationOrderEither, includeCursor: _alwaysIncluded, ...filter } = request.query;
      return listSubscribers(deps, { caller: callerOf(request), ...filter, page, limit });
    },
  );

  app.get(
    '/v2/subscribers/:subscriberId',
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

  app.patch(
    '/v2/subscribers/:subscriberId',
    {
      schema: {
        tags,
        summary: 'Update a subscriber (absent fields unchanged, null clears)',
        params: SubscriberParams,
        body: PatchSubscriberBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(SubscriberSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: await updateSubscriber(deps, { caller: callerOf(request), ...request.body, subscriberId: request.params.subscriberId }),
    }),
  );

  app.delete(
    '/v2/subscribers/:subscriberId',
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

  app.patch(
    '/v1/subscribers/:subscriberId/online-status',
    {
      schema: {
        tags,
        summary: "Update a subscriber's online status",
        params: SubscriberParams,
        body: OnlineStatusBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(SubscriberSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: await updateSubscriberOnlineStatus(deps, {
        caller: callerOf(request),
        subscriberId: request.params.subscriberId,
        isOnline: onlineFlagOf(request.body),
      }),
    }),
  );
};

function onlineFlagOf(body: { isOnline?: boolean; online?: boolean }): boolean {
  const flag = body.isOnline ?? body.online;
  if (flag === undefined) throw new ValidationError(['isOnline must be a boolean']);
  return flag;
}
