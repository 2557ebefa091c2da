import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { getOverview } from '../../usecases/dashboard/get-overview.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope } from '../schemas/common.js';
import { EnvironmentHeaders } from '../schemas/dashboard.js';
import { OverviewQuery, OverviewSchema } from '../schemas/overview.js';

/** The dashboard's landing page: delivery at a glance, from counts kept at write time. */
export const dashboardOverviewRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v1/dashboard/overview',
    {
      schema: {
        tags: ['Dashboard'],
        summary: "Delivery overview of the caller's environment over a range",
        description:
          'API keys, Bearer session callers and dashboard users (viewers included). Messages sent per channel over time, the outcome of the ' +
          'channel steps that ended (sent, failed, skipped; delivered and bounced once providers report them), failures by provider and by ' +
          'workflow, the top workflows by messages sent, in-app read and seen rates, and trigger-to-delivery latency p50/p95 (estimated from a ' +
          'fixed histogram). Read from per-hour counts kept in the transaction of each change (UTC hours), never from the events; counting ' +
          'starts with the migration that added them. A retried step counts its failure and its later success.',
        headers: EnvironmentHeaders,
        querystring: OverviewQuery,
        response: { 200: DataEnvelope(OverviewSchema), ...commonErrorResponses },
      },
    },
    async (request) => {
      const { range = '24h', from, to } = request.query;
      return { data: await getOverview(deps, { caller: callerOf(request), range, from, to }) };
    },
  );
};
