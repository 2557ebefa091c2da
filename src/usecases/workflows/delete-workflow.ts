import { isoNow } from '../../domain/clock.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { withDomainEvents } from '../events/record-domain-events.js';
import { workflowEvent } from '../../domain/webhooks.js';
import { getWorkflow } from './get-workflow.js';
import { announceWorkflowsChanged } from './announce-workflows-changed.js';

export interface DeleteWorkflowInput {
  caller: Caller;
  workflowIdOrId: string;
}

/** Soft delete: the workflow disappears from reads and its workflowId becomes free; events keep their copy. */
export async function deleteWorkflow(deps: Deps, input: DeleteWorkflowInput): Promise<void> {
  const current = await getWorkflow(deps, { caller: input.caller, workflowId: input.workflowIdOrId });
  const now = isoNow(deps.clock);
  const deleted = { ...current, deleted: true, deletedAt: now, deletedBy: input.caller.actorId, updatedAt: now };
  await withDomainEvents(deps.store, input.caller.environmentId, async (tx, events) => {
    await tx.workflows.save(deleted);
    events.push(workflowEvent('workflow.deleted', deleted, current));
  });
  await announceWorkflowsChanged(deps, input.caller.environmentId);
}
