import type { Caller } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';

export interface ListWorkflowsInput {
  caller: Caller;
  query?: string;
  offset: number;
  limit: number;
}

/** Newest first; `query` matches name or workflowId, case-insensitively. */
export async function listWorkflows(deps: Deps, input: ListWorkflowsInput): Promise<{ workflows: Workflow[]; totalCount: number }> {
  const query = input.query?.trim();
  return deps.store.workflows.list(input.caller.environmentId, {
    ...(query ? { query } : {}),
    offset: input.offset,
    limit: input.limit,
  });
}
