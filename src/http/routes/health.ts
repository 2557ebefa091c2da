import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { checkHealth } from '../../usecases/tenancy/check-health.js';

const HealthBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  checks: Type.Record(Type.String(), Type.Object({ status: Type.Union([Type.Literal('up'), Type.Literal('down')]) })),
});

export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/health',
    {
      config: { public: true },
      schema: { tags: ['Health'], summary: 'Liveness, storage and queue status', security: [], response: { 200: HealthBody, 503: HealthBody } },
    },
    async (_request, reply) => {
      const health = await checkHealth(deps);
      if (health.status !== 'ok') void reply.header('retry-after', '5');
      return reply.status(health.status === 'ok' ? 200 : 503).send(health);
    },
  );
};
