import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { WebhookEndpoint } from '../../domain/webhooks.js';
import type { Deps } from '../../usecases/deps.js';
import { createWebhookEndpoint } from '../../usecases/webhooks/create-webhook-endpoint.js';
import { getWebhookEndpoint, getWebhookSecret, listWebhookEndpoints } from '../../usecases/webhooks/get-webhook-endpoint.js';
import { listWebhookAttempts } from '../../usecases/webhooks/list-webhook-attempts.js';
import { listWebhookEventTypes } from '../../usecases/webhooks/list-webhook-event-types.js';
import { rotateWebhookSecret } from '../../usecases/webhooks/rotate-webhook-secret.js';
import { recoverWebhookEndpoint, resendWebhookAttempt, sendTestWebhook } from '../../usecases/webhooks/send-webhook.js';
import { deleteWebhookEndpoint, updateWebhookEndpoint } from '../../usecases/webhooks/update-webhook-endpoint.js';
import { callerOf } from '../auth.js';
import { Acknowledged, commonErrorResponses, DataEnvelope, IdempotencyHeaders } from '../schemas/common.js';
import {
  AttemptPage,
  AttemptParams,
  AttemptResponse,
  CreateEndpointBody,
  CreatedEndpointResponse,
  EndpointParams,
  EndpointResponse,
  EventTypeResponse,
  ListAttemptsQuery,
  RecoverBody,
  RecoverResponse,
  SecretResponse,
  UpdateEndpointBody,
  toAttemptResponse,
  toEndpointResponse,
} from '../schemas/webhook.js';

/**
 * `/v2/webhooks`: outbound webhook endpoints (docs/webhooks.md). API keys, Bearer sessions and dashboard users; a
 * dashboard viewer reads endpoints (header values hidden) but neither the secret nor anything that changes state.
 */
export const webhooksRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const tags = ['Webhooks'];
  const view = (request: FastifyRequest, endpoint: WebhookEndpoint) => {
    const response = toEndpointResponse(endpoint);
    // Extra headers often carry a receiver's token: viewers see their names only.
    if (request.dashboardSession && request.dashboardSession.user.role !== 'admin') {
      response.headers = Object.fromEntries(Object.keys(response.headers).map((name) => [name, '[hidden]']));
    }
    return response;
  };

  app.get(
    '/v2/webhooks/event-types',
    { schema: { tags, summary: 'List the webhook event types', headers: IdempotencyHeaders, response: { 200: DataEnvelope(Type.Array(EventTypeResponse)), ...commonErrorResponses } } },
    async () => ({ data: listWebhookEventTypes() }),
  );

  app.post(
    '/v2/webhooks/endpoints',
    {
      schema: {
        tags,
        summary: 'Create a webhook endpoint (the answer carries its signing secret)',
        body: CreateEndpointBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(CreatedEndpointResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const { endpoint, secret } = await createWebhookEndpoint(deps, { caller: callerOf(request), ...request.body });
      return reply.status(201).send({ data: { ...toEndpointResponse(endpoint), secret } });
    },
  );

  app.get(
    '/v2/webhooks/endpoints',
    { schema: { tags, summary: 'List webhook endpoints (never their secrets)', headers: IdempotencyHeaders, response: { 200: DataEnvelope(Type.Array(EndpointResponse)), ...commonErrorResponses } } },
    async (request) => ({ data: (await listWebhookEndpoints(deps, { caller: callerOf(request) })).map((endpoint) => view(request, endpoint)) }),
  );

  app.get(
    '/v2/webhooks/endpoints/:id',
    { schema: { tags, summary: 'Get a webhook endpoint', params: EndpointParams, headers: IdempotencyHeaders, response: { 200: DataEnvelope(EndpointResponse), ...commonErrorResponses } } },
    async (request) => ({ data: view(request, await getWebhookEndpoint(deps, { caller: callerOf(request), id: request.params.id })) }),
  );

  app.patch(
    '/v2/webhooks/endpoints/:id',
    {
      schema: {
        tags,
        summary: 'Change a webhook endpoint (enabling a disabled one clears its failure record)',
        params: EndpointParams,
        body: UpdateEndpointBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(EndpointResponse), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: view(request, await updateWebhookEndpoint(deps, { caller: callerOf(request), id: request.params.id, ...request.body })) }),
  );

  app.delete(
    '/v2/webhooks/endpoints/:id',
    { schema: { tags, summary: 'Delete a webhook endpoint (its pending attempts are not sent)', params: EndpointParams, headers: IdempotencyHeaders, response: { 200: DataEnvelope(Acknowledged), ...commonErrorResponses } } },
    async (request) => {
      await deleteWebhookEndpoint(deps, { caller: callerOf(request), id: request.params.id });
      return { data: { acknowledged: true, status: 'deleted' } };
    },
  );

  app.get(
    '/v2/webhooks/endpoints/:id/secret',
    {
      config: { adminOnly: true },
      schema: { tags, summary: "Reveal an endpoint's signing secret (not for dashboard viewers)", params: EndpointParams, headers: IdempotencyHeaders, response: { 200: DataEnvelope(SecretResponse), ...commonErrorResponses } },
    },
    async (request) => ({ data: { secret: await getWebhookSecret(deps, { caller: callerOf(request), id: request.params.id }) } }),
  );

  app.post(
    '/v2/webhooks/endpoints/:id/rotate-secret',
    {
      schema: {
        tags,
        summary: 'Rotate the signing secret: for 24 h events carry signatures from the old and the new one',
        params: EndpointParams,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(SecretResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => reply.status(201).send({ data: { secret: await rotateWebhookSecret(deps, { caller: callerOf(request), id: request.params.id }) } }),
  );

  app.get(
    '/v2/webhooks/endpoints/:id/attempts',
    {
      schema: { tags, summary: "List an endpoint's delivery attempts, newest first", params: EndpointParams, querystring: ListAttemptsQuery, headers: IdempotencyHeaders, response: { 200: AttemptPage, ...commonErrorResponses } },
    },
    async (request) => {
      const { page, limit, status } = request.query;
      const result = await listWebhookAttempts(deps, { caller: callerOf(request), id: request.params.id, status, page, limit });
      return { data: result.data.map(toAttemptResponse), page, pageSize: limit, hasMore: result.hasMore };
    },
  );

  app.post(
    '/v2/webhooks/endpoints/:id/test',
    { schema: { tags, summary: 'Send one webhook.test event to the endpoint', params: EndpointParams, headers: IdempotencyHeaders, response: { 201: DataEnvelope(AttemptResponse), ...commonErrorResponses } } },
    async (request, reply) => reply.status(201).send({ data: toAttemptResponse(await sendTestWebhook(deps, { caller: callerOf(request), id: request.params.id })) }),
  );

  app.post(
    '/v2/webhooks/endpoints/:id/recover',
    {
      schema: { tags, summary: 'Send again every event since `since` whose last attempt failed', params: EndpointParams, body: RecoverBody, headers: IdempotencyHeaders, response: { 201: DataEnvelope(RecoverResponse), ...commonErrorResponses } },
    },
    async (request, reply) => {
      const recovered = await recoverWebhookEndpoint(deps, { caller: callerOf(request), id: request.params.id, since: request.body.since });
      return reply.status(201).send({ data: { recovered } });
    },
  );

  app.post(
    '/v2/webhooks/attempts/:id/resend',
    { schema: { tags, summary: "Send one attempt's event again (same webhook-id)", params: AttemptParams, headers: IdempotencyHeaders, response: { 201: DataEnvelope(AttemptResponse), ...commonErrorResponses } } },
    async (request, reply) => reply.status(201).send({ data: toAttemptResponse(await resendWebhookAttempt(deps, { caller: callerOf(request), attemptId: request.params.id })) }),
  );
};
