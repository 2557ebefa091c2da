import type { Caller } from '../../domain/types.js';
import { executionDetail, setJobStatus } from '../engine/job-progress.js';
import type { Deps } from '../deps.js';

export interface CancelEventInput {
  caller: Caller;
  transactionId: string;
}

/**
 * DELETE /v1/events/trigger/{transactionId}: every job of the transaction that has not run yet (pending,
 * queued or delayed) ends `canceled`; a trigger not yet expanded is never expanded. True when anything was canceled.
 */
export async function cancelEvent(deps: Deps, input: CancelEventInput): Promise<boolean> {
  const env = input.caller.environmentId;
  const trigger = await deps.store.triggers.findByTransactionId(env, input.transactionId);
  if (!trigger) return false;
  let canceled = false;
  if (trigger.state === 'accepted') {
    await deps.store.triggers.setState(env, trigger._id, 'canceled');
    canceled = true;
  }
  const refs = await deps.store.triggers.listJobsOfTransaction(env, input.transactionId, ['pending', 'queued', 'delayed']);
  for (const ref of refs) {
    const job = await deps.store.jobs.get(env, ref._id);
    if (!job || !['pending', 'queued', 'delayed'].includes(job.status)) continue;
    await setJobStatus(deps, deps.store, job, 'canceled', executionDetail(deps, 'Warning', 'Step canceled by DELETE /v1/events/trigger/{transactionId}'));
    canceled = true;
  }
  return canceled;
}
