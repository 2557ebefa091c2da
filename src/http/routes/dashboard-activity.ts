import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { retryFailedJob } from '../../usecases/notifications/retry-failed-job.js';
import { previewStep } from '../../usecases/workflows/preview-step.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope } from '../schemas/common.js';
import { EnvironmentHeaders, PreviewBody, PreviewParams, PreviewResponse } from '../schemas/dashboard.js';
import { JobSchema } from '../schemas/notification.js';

const tags = ['Dashboard'];

/** What the dashboard needs beyond the routes Novu clients use: retrying a failed step, a step preview. */
export const dashboardActivityRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/v1/notifications/:notificationId/jobs/:jobId/retry',
    {
      schema: {
        tags,
        summary: 'Retry a failed step: a new attempt of that job through the queue, recorded as a retry',
        description:
          'API keys, Bearer session callers and dashboard admins. Only a `failed` job (409 otherwise). The answer is the job, now `queued`; ' +
          'its execution details gain a Queued detail with `isRetry: true`, and so does every detail of the new attempt. A channel step sends ' +
          'again; on success its failed message becomes the sent one, and later steps that the failure had stopped continue.',
        headers: EnvironmentHeaders,
        params: Type.Object({ notificationId: Type.String(), jobId: Type.String() }),
        response: { 201: DataEnvelope(JobSchema), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const data = await retryFailedJob(deps, { caller: callerOf(request), ...request.params });
      return reply.status(201).send({ data });
    },
  );

  app.post(
    '/v2/workflows/:workflowId/step/:stepId/preview',
    {
      // Renders, changes nothing: viewers may preview too.
      config: { viewerAllowed: true },
      schema: {
        tags,
        summary: "Render a workflow step's preview from control values and a sample subscriber and payload",
        description:
          "@novu/api's `workflows.steps.generatePreview`. `workflowId` is the workflow's `_id` or workflowId, `stepId` the step's stepId or `_id`. " +
          'Channel steps are rendered with the Liquid code the worker uses; a template that does not render answers `result.error`.',
        headers: EnvironmentHeaders,
        params: PreviewParams,
        body: PreviewBody,
        response: { 201: DataEnvelope(PreviewResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const data = await previewStep(deps, { caller: callerOf(request), ...request.params, ...request.body });
      return reply.status(201).send({ data });
    },
  );
};
