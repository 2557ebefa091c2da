import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { checkHealth } from '../../usecases/tenancy/check-health.js';
import type { Lifecycle } from '../lifecycle.js';

const HealthBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  checks: Type.Record(Type.String(), Type.Object({ status: Type.Union([Type.Literal('up'), Type.Literal('down')]) })),
});

const LiveBody = Type.Object({ status: Type.Literal('ok') });
const ReadyBody = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('starting'), Type.Literal('draining'), Type.Literal('degraded')]),
  checks: Type.Optional(HealthBody.properties.checks),
});

export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; lifecycle?: Lifecycle }> = async (app, { deps, lifecycle }) => {
  // Liveness: the process answers. Nothing else: restarting a process because its database is down helps nobody.
  app.get(
    '/health/live',
    { config: { public: true }, schema: { tags: ['Health'], summary: 'Liveness: the process answers', security: [], response: { 200: LiveBody } } },
    async () => ({ status: 'ok' as const }),
  );

  // Readiness: send traffic here. False (503) while starting, while draining after SIGTERM, and while the database
  // or the queue is unreachable. Without a lifecycle (an app built by a test or an embedder) the app counts as started.
  app.get(
    '/health/ready',
    {
      config: { public: true },
      schema: { tags: ['Health'], summary: 'Readiness: started, not draining, storage and queue up', security: [], response: { 200: ReadyBody, 503: ReadyBody } },
    },
    async (_request, reply) => {
      const state = lifecycle?.state ?? 'ready';
      if (state !== 'ready') return reply.status(503).header('retry-after', '1').send({ status: state });
      const health = await checkHealth(deps);
      if (health.status !== 'ok') return reply.status(503).header('retry-after', '5').send({ status: 'degraded', checks: health.checks });
      return reply.status(200).send({ status: 'ready', checks: health.checks });
    },
  );

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
