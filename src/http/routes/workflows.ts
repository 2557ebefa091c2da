import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../usecases/deps.js';
import { createWorkflow } from '../../usecases/workflows/create-workflow.js';
import { deleteWorkflow } from '../../usecases/workflows/delete-workflow.js';
import { getWorkflow } from '../../usecases/workflows/get-workflow.js';
import { getWorkflowStep } from '../../usecases/workflows/get-workflow-step.js';
import { listWorkflows } from '../../usecases/workflows/list-workflows.js';
import { patchWorkflow } from '../../usecases/workflows/patch-workflow.js';
import { updateWorkflow } from '../../usecases/workflows/update-workflow.js';
import { callerOf } from '../auth.js';
import { commonErrorResponses, DataEnvelope, IdempotencyHeaders } from '../schemas/common.js';
import {
  CreateWorkflowBody,
  ListWorkflowsQuery,
  PatchWorkflowBody,
  UpdateWorkflowBody,
  WorkflowListResponse,
  WorkflowParams,
  WorkflowResponse,
  WorkflowStepParams,
  StepResponse,
  toStepResponse,
  toWorkflowListItem,
  toWorkflowResponse,
} from '../schemas/workflow.js';

/** `/v2/workflows`: Novu's v2 workflow API. The path id is the workflow `_id` or its workflowId. */
export const workflowsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const tags = ['Workflows'];

  app.post(
    '/v2/workflows',
    {
      schema: {
        tags,
        summary: 'Create a workflow',
        body: CreateWorkflowBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(WorkflowResponse), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const workflow = await createWorkflow(deps, { caller: callerOf(request), ...request.body });
      return reply.status(201).send({ data: toWorkflowResponse(workflow) });
    },
  );

  app.get(
    '/v2/workflows',
    {
      schema: {
        tags,
        summary: 'List workflows (newest first; `query` searches name and workflowId)',
        querystring: ListWorkflowsQuery,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(WorkflowListResponse), ...commonErrorResponses },
      },
    },
    async (request) => {
      const { workflows, totalCount } = await listWorkflows(deps, { caller: callerOf(request), ...request.query });
      return { data: { workflows: workflows.map(toWorkflowListItem), totalCount } };
    },
  );

  app.get(
    '/v2/workflows/:workflowId',
    {
      schema: {
        tags,
        summary: 'Get a workflow by `_id` or workflowId',
        params: WorkflowParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(WorkflowResponse), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: toWorkflowResponse(await getWorkflow(deps, { caller: callerOf(request), workflowId: request.params.workflowId })) }),
  );

  app.get(
    '/v2/workflows/:workflowId/steps/:stepId',
    {
      schema: {
        tags,
        summary: "One step of a workflow, by the step's stepId or `_id`",
        params: WorkflowStepParams,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(StepResponse), ...commonErrorResponses },
      },
    },
    async (request) => {
      const { workflow, step } = await getWorkflowStep(deps, { caller: callerOf(request), ...request.params });
      return { data: toStepResponse(step, workflow) };
    },
  );

  app.put(
    '/v2/workflows/:workflowId',
    {
      schema: {
        tags,
        summary: 'Update a workflow (each given field is replaced as a whole)',
        params: WorkflowParams,
        body: UpdateWorkflowBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(WorkflowResponse), ...commonErrorResponses },
      },
    },
    async (request) => {
      const workflow = await updateWorkflow(deps, {
        caller: callerOf(request),
        workflowIdOrId: request.params.workflowId,
        ...request.body,
      });
      return { data: toWorkflowResponse(workflow) };
    },
  );

  app.patch(
    '/v2/workflows/:workflowId',
    {
      schema: {
        tags,
        summary: 'Change some fields of a workflow (active, name, description, tags, payloadSchema, ...)',
        params: WorkflowParams,
        body: PatchWorkflowBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(WorkflowResponse), ...commonErrorResponses },
      },
    },
    async (request) => {
      const workflow = await patchWorkflow(deps, {
        caller: callerOf(request),
        workflowIdOrId: request.params.workflowId,
        ...request.body,
      });
      return { data: toWorkflowResponse(workflow) };
    },
  );

  app.delete(
    '/v2/workflows/:workflowId',
    {
      schema: {
        tags,
        summary: 'Delete a workflow (soft delete; 204 as in Novu)',
        params: WorkflowParams,
        headers: IdempotencyHeaders,
        response: { 204: Type.Null({ description: 'Deleted' }), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      await deleteWorkflow(deps, { caller: callerOf(request), workflowIdOrId: request.params.workflowId });
      return reply.status(204).send(null);
    },
  );
};
