import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { getRetentionSettings } from '../../usecases/dashboard/get-retention-settings.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope } from '../schemas/common.js';
import { EnvironmentHeaders } from '../schemas/dashboard.js';
import { RetentionSettingsSchema } from '../schemas/retention.js';

const tags = ['Dashboard'];

/** The server's settings the dashboard's Settings page shows (read only: they come from the configuration). */
export const dashboardSettingsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/v1/dashboard/settings/retention',
    {
      config: { dashboardOnly: true },
      schema: {
        tags,
        summary: 'The retention in force (HERALD_RETENTION_DAYS, HERALD_MESSAGE_RETENTION_DAYS) and the last sweep',
        headers: EnvironmentHeaders,
        response: { 200: DataEnvelope(RetentionSettingsSchema), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await getRetentionSettings(deps, { caller: callerOf(request) }) }),
  );
};
