import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { callerOf } from '../auth.js';
import { DataEnvelope, IdempotencyHeaders, commonErrorResponses } from '../schemas/common.js';
import { SubscriberSchema } from '../schemas/subscriber.js';
import {
  NoContent,
  SubscriberChannelBody,
  SubscriberCredentialsParams,
  SubscriberProviderCredentialsParams,
} from '../schemas/subscriber-credentials.js';
import { deleteSubscriberCredentials } from '../../usecases/subscriber-credentials/delete-subscriber-credentials.js';
import { mergeSubscriberCredentials } from '../../usecases/subscriber-credentials/merge-subscriber-credentials.js';
import { setSubscriberCredentials } from '../../usecases/subscriber-credentials/set-subscriber-credentials.js';

const tags = ['Subscribers'];

/** A subscriber's per-provider channel credentials (Novu's v1 subscriber credentials routes). */
export const subscriberCredentialsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  // No body coercion: `"deviceTokens": "abc"` or `"webhookUrl": 5` is a 400, not ["abc"] or "5".
  app.put(
    '/v1/subscribers/:subscriberId/credentials',
    {
      schema: {
        tags,
        summary: "Set a subscriber's credentials for a chat or push provider (replaces that provider's entry)",
        params: SubscriberCredentialsParams,
        body: SubscriberChannelBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(SubscriberSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: await setSubscriberCredentials(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId, ...request.body }),
    }),
  );

  app.patch(
    '/v1/subscribers/:subscriberId/credentials',
    {
      schema: {
        tags,
        summary: "Merge into a subscriber's credentials for a chat or push provider (device tokens appended)",
        params: SubscriberCredentialsParams,
        body: SubscriberChannelBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(SubscriberSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: await mergeSubscriberCredentials(deps, { caller: callerOf(request), subscriberId: request.params.subscriberId, ...request.body }),
    }),
  );

  app.delete(
    '/v1/subscribers/:subscriberId/credentials/:providerId',
    {
      schema: {
        tags,
        summary: "Delete a subscriber's credentials for a provider",
        params: SubscriberProviderCredentialsParams,
        headers: IdempotencyHeaders,
        response: { 204: NoContent, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { subscriberId, providerId } = request.params;
      await deleteSubscriberCredentials(deps, { caller: callerOf(request), subscriberId, providerId });
      return reply.status(204).send(null);
    },
  );
};
