import type { Deps } from '../deps.js';
import { enqueueTrigger } from './accept-trigger.js';

const SWEEP_LIMIT = 100_000;

/**
 * The start-up sweep: every trigger still `accepted` gets its queue job back (a no-op when it still has one,
 * thanks to the dedupe key), so a trigger answered 201 just before a crash is processed after the restart.
 */
export async function recoverAcceptedTriggers(deps: Deps): Promise<number> {
  const stale = await deps.store.triggers.listStale(new Date(deps.clock.now() + 1).toISOString(), SWEEP_LIMIT);
  for (const trigger of stale) await enqueueTrigger(deps, trigger);
  return stale.length;
}
