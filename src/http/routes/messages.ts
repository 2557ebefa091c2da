import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { callerOf } from '../auth.js';
import { Acknowledged, DataEnvelope, IdempotencyHeaders, PageEnvelope, commonErrorResponses } from '../schemas/common.js';
import {
  LegacyMarkAsBody,
  ListMessagesQuery,
  MarkAllBody,
  MarkAsBody,
  MarkAsParams,
  MessageActionBody,
  MessageActionParams,
  MessageParams,
  MessageSchema,
  TransactionMessagesParams,
  TransactionMessagesQuery,
} from '../schemas/message.js';
import { marksOf } from '../../domain/legacy-mark.js';
import { serializeMessagePage } from '../message-page-serializer.js';
import type { PageReaders } from '../../readers/reader-pool.js';
import { deleteTransactionMessages } from '../../usecases/messages/delete-transaction-messages.js';
import { markAllMessagesAs } from '../../usecases/messages/mark-all-messages-as.js';
import { deleteMessage } from '../../usecases/messages/delete-message.js';
import { listMessages } from '../../usecases/messages/list-messages.js';
import { markMessagesAs } from '../../usecases/messages/mark-messages-as.js';
import { updateMessageAction } from '../../usecases/messages/update-message-action.js';

const tags = ['Messages'];

export const messagesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; readers?: PageReaders }> = async (app, { deps, readers }) => {
  app.get(
    '/v1/messages',
    {
      schema: {
        tags,
        summary: 'List messages, newest first',
        querystring: ListMessagesQuery,
        headers: IdempotencyHeaders,
        response: { 200: PageEnvelope(MessageSchema, { totalCount: true }), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { page = 0, limit = 10, ...filter } = request.query;
      const input = { caller: callerOf(request), ...filter, page, limit };
      // Embedded: read and written on a reader thread (src/readers/); the main thread reads what a thread could not.
      // Written from the stored JSON, the bytes the response schema's serializer would write (message-page-serializer.ts).
      const body = (await readers?.messagePage(input)) ?? serializeMessagePage(await listMessages(deps, input));
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );

  app.delete(
    '/v1/messages/:messageId',
    {
      schema: {
        tags,
        summary: 'Delete a message',
        params: MessageParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Acknowledged), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await deleteMessage(deps, { caller: callerOf(request), messageId: request.params.messageId }) }),
  );

  app.post(
    '/v1/subscribers/:subscriberId/messages/mark-as',
    {
      schema: {
        tags,
        summary: "Mark a subscriber's in-app messages as read, seen, unread or unseen",
        params: MarkAsParams,
        body: MarkAsBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(Type.Array(MessageSchema)), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const messages = await markMessagesAs(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId, ...request.body });
      return reply.status(201).send({ data: messages });
    },
  );

  app.post(
    '/v1/subscribers/:subscriberId/messages/markAs',
    {
      schema: {
        tags,
        summary: "Legacy mark-as (@novu/node): set a subscriber's in-app messages' seen and/or read flags",
        params: MarkAsParams,
        body: LegacyMarkAsBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(Type.Array(MessageSchema)), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const messages = await markMessagesAs(deps, {
        caller: callerOf(request),
        subscriberId: request.params.subscriberId,
        messageId: request.body.messageId,
        markAs: marksOf(request.body.mark),
      });
      return reply.status(201).send({ data: messages });
    },
  );

  app.post(
    '/v1/subscribers/:subscriberId/messages/mark-all',
    {
      schema: {
        tags,
        summary: "Mark all of a subscriber's in-app messages as read, seen, unread or unseen; answers how many changed",
        params: MarkAsParams,
        body: MarkAllBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(Type.Integer()), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { feedIdentifier } = request.body;
      const changed = await markAllMessagesAs(deps, {
        caller: callerOf(request),
        subscriberId: request.params.subscriberId,
        markAs: request.body.markAs,
        ...(feedIdentifier !== undefined ? { feedIdentifiers: Array.isArray(feedIdentifier) ? feedIdentifier : [feedIdentifier] } : {}),
      });
      return reply.status(201).send({ data: changed });
    },
  );

  app.post(
    '/v1/subscribers/:subscriberId/messages/:messageId/actions/:type',
    {
      schema: {
        tags,
        summary: "Complete (status done) or revert (pending) a button of a subscriber's in-app message, keeping the click's payload",
        params: MessageActionParams,
        body: MessageActionBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(MessageSchema), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const message = await updateMessageAction(deps, { caller: callerOf(request), ...request.params, ...request.body });
      return reply.status(201).send({ data: message });
    },
  );

  app.delete(
    '/v1/messages/transaction/:transactionId',
    {
      schema: {
        tags,
        summary: "Delete a transaction's messages (of one channel with ?channel=); 204",
        params: TransactionMessagesParams,
        querystring: TransactionMessagesQuery,
        headers: IdempotencyHeaders,
        response: { 204: Type.Null({ description: 'Deleted' }), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      await deleteTransactionMessages(deps, {
        caller: callerOf(request),
        transactionId: request.params.transactionId,
        ...(request.query.channel !== undefined ? { channel: request.query.channel } : {}),
      });
      return reply.status(204).send(null);
    },
  );
};

