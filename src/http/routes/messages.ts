import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { callerOf } from '../auth.js';
import { Acknowledged, DataEnvelope, IdempotencyHeaders, PageEnvelope, commonErrorResponses } from '../schemas/common.js';
import { ListMessagesQuery, MarkAsBody, MarkAsParams, MessageParams, MessageSchema } from '../schemas/message.js';
import { deleteMessage } from '../../usecases/messages/delete-message.js';
import { listMessages } from '../../usecases/messages/list-messages.js';
import { markMessagesAs } from '../../usecases/messages/mark-messages-as.js';

const tags = ['Messages'];

export const messagesRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
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
    async (request) => {
      const { page = 0, limit = 10, ...filter } = request.query;
      return listMessages(deps, { caller: callerOf(request), ...filter, page, limit });
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
};
