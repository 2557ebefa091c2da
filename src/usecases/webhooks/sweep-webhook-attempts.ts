import type { Deps } from '../deps.js';
import { enqueueAttempts } from './webhook-attempts.js';

/**
 * Re-queues pending attempts overdue by `overdueMs`: their job was lost between a commit and its enqueue (a crash),
 * or failed on an infrastructure error. A job that still exists merely runs twice; the second run finds the attempt
 * finished and does nothing. Returns how many were re-queued.
 */
export async function sweepWebhookAttempts(deps: Deps, overdueMs: number): Promise<number> {
  const now = deps.clock.now();
  const overdue = await deps.store.webhooks.listOverdueAttempts(new Date(now - overdueMs).toISOString(), 1000);
  await enqueueAttempts(deps, overdue, `sweep${now}`);
  return overdue.length;
}
