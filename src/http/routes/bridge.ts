import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ValidationError } from '../../domain/errors.js';
import { bridgeStatus, validateBridge } from '../../usecases/bridge/bridge-status.js';
import { previewBridgeStep } from '../../usecases/bridge/preview-bridge-step.js';
import { getStepControls, putStepControls } from '../../usecases/bridge/step-controls.js';
import { diffBridge, syncBridge } from '../../usecases/bridge/sync-bridge.js';
import type { Deps } from '../../usecases/deps.js';
import { callerOf } from '../auth.js';
import {
  BridgeDiffResponse,
  BridgeStatusResponse,
  BridgeUrlBody,
  BridgeValidateResponse,
  PreviewStepBody,
  PreviewStepResponse,
  PutStepControlsBody,
  StepControlsResponse,
  StepParams,
  SyncQuery,
} from '../schemas/bridge.js';
import { DataEnvelope, IdempotencyHeaders, commonErrorResponses } from '../schemas/common.js';
import { WorkflowResponse, toWorkflowResponse } from '../schemas/workflow.js';

/** `/v1/bridge/*`: code-first workflows served by an app's @novu/framework bridge (`npx novu sync`). */
export const bridgeRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const tags = ['Bridge'];

  app.post(
    '/v1/bridge/sync',
    {
      schema: {
        tags,
        summary: 'Discover the workflows of a bridge and store them as external workflows (npx novu sync)',
        querystring: SyncQuery,
        body: BridgeUrlBody,
        headers: IdempotencyHeaders,
        response: { 201: DataEnvelope(Type.Array(WorkflowResponse)), ...commonErrorResponses },
      },
    },
    async (request, reply) => {
      const workflows = await syncBridge(deps, { caller: callerOf(request), bridgeUrl: request.body.bridgeUrl });
      return reply.status(201).send({ data: workflows.map(toWorkflowResponse) });
    },
  );

  app.post(
    '/v1/bridge/diff',
    {
      // Reads only: dashboard viewers may call it too.
      config: { viewerAllowed: true },
      schema: {
        tags,
        summary: 'What a sync of this bridge would create, update and delete',
        body: BridgeUrlBody,
        response: { 200: DataEnvelope(BridgeDiffResponse), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await diffBridge(deps, { caller: callerOf(request), bridgeUrl: request.body.bridgeUrl }) }),
  );

  app.get(
    '/v1/bridge/status',
    { schema: { tags, summary: "The environment's bridge and its health-check", response: { 200: DataEnvelope(BridgeStatusResponse), ...commonErrorResponses } } },
    async (request) => ({ data: await bridgeStatus(deps, callerOf(request)) }),
  );

  app.post(
    '/v1/bridge/validate',
    {
      // Reads only: dashboard viewers may call it too.
      config: { viewerAllowed: true },
      schema: {
        tags,
        summary: 'Whether a URL answers as a @novu/framework bridge',
        body: BridgeUrlBody,
        response: { 200: DataEnvelope(BridgeValidateResponse), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await validateBridge(deps, { caller: callerOf(request), bridgeUrl: request.body.bridgeUrl }) }),
  );

  app.get(
    '/v1/bridge/controls/:workflowId/:stepId',
    {
      schema: { tags, summary: "A code-first step's stored control values and control schema", params: StepParams, response: { 200: DataEnvelope(StepControlsResponse), ...commonErrorResponses } },
    },
    async (request) => ({ data: await getStepControls(deps, { caller: callerOf(request), ...request.params }) }),
  );

  app.put(
    '/v1/bridge/controls/:workflowId/:stepId',
    {
      schema: {
        tags,
        summary: "Replace a code-first step's control values (checked against its control schema)",
        params: StepParams,
        body: PutStepControlsBody,
        headers: IdempotencyHeaders,
        response: { 200: DataEnvelope(StepControlsResponse), ...commonErrorResponses },
      },
    },
    async (request) => {
      const values = request.body.variables ?? request.body.controls;
      if (!values) throw new ValidationError(['variables must be an object of control values']);
      return { data: await putStepControls(deps, { caller: callerOf(request), ...request.params, values }) };
    },
  );

  app.post(
    '/v1/bridge/preview/:workflowId/:stepId',
    {
      // Reads only: dashboard viewers may call it too.
      config: { viewerAllowed: true },
      schema: {
        tags,
        summary: "A code-first step's content computed by the bridge (?action=preview)",
        params: StepParams,
        body: PreviewStepBody,
        response: { 200: DataEnvelope(PreviewStepResponse), ...commonErrorResponses },
      },
    },
    async (request) => ({ data: await previewBridgeStep(deps, { caller: callerOf(request), ...request.params, ...request.body }) }),
  );
};
