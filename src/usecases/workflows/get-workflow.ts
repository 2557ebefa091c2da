import { NotFoundError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';

export interface GetWorkflowInput {
  caller: Caller;
  /** The internal `_id` or the workflowId. */
  workflowId: string;
}

/** A non-deleted workflow of the caller's environment, by `_id` or workflowId; 404 otherwise. */
export async function getWorkflow(deps: Deps, input: GetWorkflowInput): Promise<Workflow> {
  const workflow = await deps.store.workflows.get(input.caller.environmentId, input.workflowId);
  if (!workflow) throw NotFoundError.entity('Workflow', input.workflowId);
  return workflow;
}
