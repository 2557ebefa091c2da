import type { Deps } from '../deps.js';
import { enqueueAttempts } from './webhook-attempts.js';

/**
 * Re-queues pending attempts overdue by `overdueMs`: their job was lost between a commit and its enqueue (a crash),
 * or failed on an infrastructure error. A job that still exists merely runs twice; the second run finds the attempt
 * finished and does nothing. The re-queue's key changes only every ten `overdueMs`, so an attempt that is late
 * because the queue has a backlog is added once per such window, not at every sweep (which would grow the backlog).
 * Returns how many attempts were overdue.
 */
export async function sweepWebhookAttempts(deps: Deps, overdueMs: number): Promise<number> {
  const now = deps.clock.now();
  const overdue = await deps.store.webhooks.listOverdueAttempts(new Date(now - overdueMs).toISOString(), 1000);
  await enqueueAttempts(deps, overdue, `sweep${Math.floor(now / Math.max(1000, overdueMs * 10))}`);
  return overdue.length;
}

/** Deletes events and finished attempts older than config.webhooks.retentionDays, in batches; returns how many rows. */
export async function pruneWebhookHistory(deps: Deps): Promise<number> {
  const before = new Date(deps.clock.now() - deps.config.webhooks.retentionDays * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const deleted = await deps.store.webhooks.pruneBefore(before, 1000);
    total += deleted;
    if (deleted < 1000) return total;
  }
}
