import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { broadcastEvent } from '../../usecases/events/broadcast-event.js';
import { cancelEvent } from '../../usecases/events/cancel-event.js';
import { triggerBulk } from '../../usecases/events/trigger-bulk.js';
import { triggerEvent } from '../../usecases/events/trigger-event.js';
import type { TriggerEventInput } from '../../usecases/events/trigger-event.js';
import { callerOf } from '../auth.js';
import { idempotentId } from '../idempotency.js';
import { DataEnvelope, IdempotencyHeaders, commonErrorResponses } from '../schemas/common.js';
import { BroadcastBody, BulkTriggerBody, TransactionParams, TriggerBody, TriggerResponse } from '../schemas/event.js';

const tags = ['Events'];

export const eventsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/v1/events/trigger',
    {
      schema: {
        tags,
        summary: 'Trigger a workflow for subscribers, subscriber objects or topics',
        body: TriggerBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(TriggerResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const body = request.body as Omit<TriggerEventInput, 'caller'>;
      // A keyed trigger run again after a crash reuses the first run's transactionId, which deduplicates it.
      const data = await triggerEvent(deps, { caller: callerOf(request), ...body, transactionId: body.transactionId ?? idempotentId(request) });
      return reply.status(201).send({ data });
    },
  );

  app.post(
    '/v1/events/trigger/bulk',
    {
      schema: {
        tags,
        summary: 'Trigger several events at once (each accepted or refused on its own)',
        body: BulkTriggerBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(Type.Array(TriggerResponse)), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const events = request.body.events as Array<Omit<TriggerEventInput, 'caller'>>;
      const fallbackTransactionIds = request.idempotency ? events.map((_event, index) => idempotentId(request, index)) : undefined;
      const data = await triggerBulk(deps, { caller: callerOf(request), events, fallbackTransactionIds });
      return reply.status(201).send({ data });
    },
  );

  app.post(
    '/v1/events/trigger/broadcast',
    {
      schema: {
        tags,
        summary: 'Trigger a workflow for every subscriber of the environment',
        body: BroadcastBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(TriggerResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const body = request.body as Omit<TriggerEventInput, 'caller' | 'to'>;
      const data = await broadcastEvent(deps, { caller: callerOf(request), ...body, transactionId: body.transactionId ?? idempotentId(request) });
      return reply.status(201).send({ data });
    },
  );

  app.delete(
    '/v1/events/trigger/:transactionId',
    {
      schema: {
        tags,
        summary: 'Cancel the steps of a transaction that have not run yet',
        params: TransactionParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Type.Boolean()), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await cancelEvent(deps, { caller: callerOf(request), transactionId: request.params.transactionId }) }),
  );
};
