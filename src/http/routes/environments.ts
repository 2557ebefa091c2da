import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../usecases/deps.js';
import { getCurrentEnvironment, listEnvironments } from '../../usecases/environments/list-environments.js';
import { getEnvironmentTags } from '../../usecases/environments/get-environment-tags.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope, IdempotencyHeaders } from '../schemas/common.js';
import { EnvironmentResponse, toEnvironmentResponse } from '../schemas/environment.js';

const tags = ['Environments'];

export const environmentsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v1/environments/me',
    {
      schema: {
        tags,
        summary: "The caller's environment, with its public application identifier",
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(EnvironmentResponse), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: toEnvironmentResponse(await getCurrentEnvironment(deps, callerOf(request))) }),
  );

  app.get(
    '/v1/environments',
    {
      schema: {
        tags,
        summary: "The organization's environments",
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Type.Array(EnvironmentResponse)), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: (await listEnvironments(deps, callerOf(request))).map(toEnvironmentResponse) }),
  );

  app.get(
    '/v2/environments/:environmentId/tags',
    {
      schema: {
        tags,
        summary: "The tags of the environment's workflows, once each (the caller's environment, by _id or identifier)",
        params: Type.Object({ environmentId: Type.String() }),
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(Type.Array(Type.Object({ name: Type.String() }))), ...commonErrorResponses },
      },
    },
    async (request) => ({
      data: (await getEnvironmentTags(deps, { caller: callerOf(request), environmentId: request.params.environmentId })).map((name) => ({ name })),
    }),
  );
};
