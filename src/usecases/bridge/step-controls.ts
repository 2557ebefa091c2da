import { isoNow } from '../../domain/clock.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { validatePayload } from '../../domain/payload-schema.js';
import type { Caller } from '../../domain/types.js';
import type { Workflow, WorkflowStep } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';

export interface StepControls {
  workflowId: string;
  stepId: string;
  type: string;
  /** The stored values; `{}` when never edited (the code's defaults apply). */
  values: Record<string, unknown>;
  /** The step's control JSON Schema, from the code. */
  schema: Record<string, unknown>;
  updatedAt?: string;
}

/** The external workflow and its step, or a 404 naming what is missing (dashboard workflows have no bridge controls). */
export async function externalStep(deps: Deps, caller: Caller, workflowId: string, stepId: string): Promise<{ workflow: Workflow; step: WorkflowStep }> {
  const workflow = await deps.store.workflows.get(caller.environmentId, workflowId);
  if (!workflow || workflow.origin !== 'external') throw NotFoundError.entity('Code-first workflow', workflowId);
  const step = workflow.steps.find((candidate) => candidate.stepId === stepId);
  if (!step) throw NotFoundError.entity(`Step of workflow ${workflow.workflowId}`, stepId);
  return { workflow, step };
}

/** GET /v1/bridge/controls/{workflowId}/{stepId}. */
export async function getStepControls(deps: Deps, input: { caller: Caller; workflowId: string; stepId: string }): Promise<StepControls> {
  const { workflow, step } = await externalStep(deps, input.caller, input.workflowId, input.stepId);
  const values = await deps.store.bridge.getControls(input.caller.environmentId, workflow.workflowId, step.stepId);
  return { workflowId: workflow.workflowId, stepId: step.stepId, type: step.bridge?.type ?? step.type, values: values ?? {}, schema: step.bridge?.controlSchema ?? {} };
}

/**
 * PUT /v1/bridge/controls/{workflowId}/{stepId}: replaces the step's stored control values, checked against the
 * step's control schema (400 naming each field). The next execution of the step sends them to the bridge.
 */
export async function putStepControls(deps: Deps, input: { caller: Caller; workflowId: string; stepId: string; values: Record<string, unknown> }): Promise<StepControls> {
  const { workflow, step } = await externalStep(deps, input.caller, input.workflowId, input.stepId);
  const schema = step.bridge?.controlSchema ?? {};
  const problems = validatePayload(schema, input.values).map((problem) => problem.replace(/^payload/, 'variables'));
  if (problems.length > 0) throw new ValidationError(problems);
  const at = isoNow(deps.clock);
  await deps.store.bridge.saveControls(input.caller.environmentId, workflow.workflowId, step.stepId, input.values, at);
  return { workflowId: workflow.workflowId, stepId: step.stepId, type: step.bridge?.type ?? step.type, values: input.values, schema, updatedAt: at };
}
