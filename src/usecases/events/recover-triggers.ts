import type { Deps } from '../deps.js';
import { triggerJob } from './accept-trigger.js';
import { JOB_NAMES } from '../../queue/jobs.js';

const SWEEP_LIMIT = 100_000;

/**
 * The sweep: every trigger still `accepted` (and older than `olderThanMs`) gets its queue job back (a no-op when it
 * still has one, thanks to the dedupe key; in bulk, a few round trips for the whole backlog), so a trigger answered 201 just before a crash is processed after the
 * restart. The worker runs it at start for every such trigger, then periodically for those older than a minute: a
 * trigger row whose queue job was never written (the enqueue failed after the row was stored, and the client did not
 * repeat the request) is then processed without waiting for a restart.
 */
export async function recoverAcceptedTriggers(deps: Deps, olderThanMs = 0): Promise<number> {
  const stale = await deps.store.triggers.listStale(new Date(deps.clock.now() + 1 - olderThanMs).toISOString(), SWEEP_LIMIT);
  await deps.queue.enqueueMany(JOB_NAMES.processTrigger, stale.map(triggerJob));
  return stale.length;
}
