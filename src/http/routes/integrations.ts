import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { createIntegration } from '../../usecases/integrations/create-integration.js';
import { deleteIntegration } from '../../usecases/integrations/delete-integration.js';
import { listActiveIntegrations } from '../../usecases/integrations/list-active-integrations.js';
import { listIntegrations } from '../../usecases/integrations/list-integrations.js';
import { setPrimaryIntegration } from '../../usecases/integrations/set-primary-integration.js';
import { updateIntegration } from '../../usecases/integrations/update-integration.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope, IdempotencyHeaders } from '../schemas/common.js';
import { CreateIntegrationBody, IntegrationParams, IntegrationSchema, UpdateIntegrationBody } from '../schemas/integration.js';

const tags = ['Integrations'];
const IntegrationEnvelope = DataEnvelope(IntegrationSchema);
const IntegrationListEnvelope = DataEnvelope(Type.Array(IntegrationSchema));

export const integrationsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/v1/integrations',
    {
      schema: {
        tags,
        summary: 'Create an integration',
        description: 'Credentials are encrypted at rest and returned only to session (Bearer) callers.',
        headers: IdempotencyHeaders,
        body: CreateIntegrationBody,
        response: { 201: IntegrationEnvelope, ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const data = await createIntegration(deps, { caller: callerOf(request), ...request.body });
      return reply.status(201).send({ data });
    },
  );

  app.get(
    '/v1/integrations',
    {
      schema: {
        tags,
        summary: 'List the integrations of the environment',
        headers: IdempotencyHeaders,
        response: { 200: IntegrationListEnvelope, ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await listIntegrations(deps, { caller: callerOf(request) }) }),
  );

  app.get(
    '/v1/integrations/active',
    {
      schema: {
        tags,
        summary: 'List the active integrations of the environment',
        headers: IdempotencyHeaders,
        response: { 200: IntegrationListEnvelope, ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await listActiveIntegrations(deps, { caller: callerOf(request) }) }),
  );

  app.put(
    '/v1/integrations/:integrationId',
    {
      schema: {
        tags,
        summary: 'Update an integration',
        description: 'Absent fields are unchanged; `credentials` replaces the stored object. Active integrations are validated and checked.',
        params: IntegrationParams,
        headers: IdempotencyHeaders,
        body: UpdateIntegrationBody,
        response: { 200: IntegrationEnvelope, ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: await updateIntegration(deps, { caller: callerOf(request), integrationId: request.params.integrationId, ...request.body }),
    }),
  );

  app.delete(
    '/v1/integrations/:integrationId',
    {
      schema: {
        tags,
        summary: 'Delete an integration',
        description: 'Soft delete, irreversible. Answers with the remaining integrations of the environment.',
        params: IntegrationParams,
        headers: IdempotencyHeaders,
        response: { 200: IntegrationListEnvelope, ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await deleteIntegration(deps, { caller: callerOf(request), integrationId: request.params.integrationId }) }),
  );

  app.post(
    '/v1/integrations/:integrationId/set-primary',
    {
      schema: {
        tags,
        summary: 'Make an integration the primary of its channel',
        description: 'Also activates it; the other integrations of the channel lose primary.',
        params: IntegrationParams,
        headers: IdempotencyHeaders,
        response: { 200: IntegrationEnvelope, ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: await setPrimaryIntegration(deps, { caller: callerOf(request), integrationId: request.params.integrationId }),
    }),
  );
};
