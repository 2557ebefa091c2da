import { NotFoundError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Workflow, WorkflowStep } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';
import { getWorkflow } from './get-workflow.js';

/**
 * GET /v2/workflows/{workflowId}/steps/{stepId}: one stored step of a workflow of the caller's environment, by its
 * stepId (slug) or its `_id`; 404 when the workflow or the step is not there.
 */
export async function getWorkflowStep(deps: Deps, input: { caller: Caller; workflowId: string; stepId: string }): Promise<{ workflow: Workflow; step: WorkflowStep }> {
  const workflow = await getWorkflow(deps, { caller: input.caller, workflowId: input.workflowId });
  const step = workflow.steps.find((candidate) => candidate.stepId === input.stepId) ?? workflow.steps.find((candidate) => candidate._id === input.stepId);
  if (!step) throw NotFoundError.entity('Step', input.stepId);
  return { workflow, step };
}
