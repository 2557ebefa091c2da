import { randomBytes } from 'node:crypto';
import type { Deps } from '../usecases/deps.js';
import { sweepRetention } from '../usecases/retention/sweep-retention.js';

/** The first sweep after a start waits this long (or the interval, when shorter), so a start is not slowed by it. */
const FIRST_SWEEP_DELAY_MS = 60_000;

/**
 * Runs the retention sweep every HERALD_RETENTION_SWEEP_INTERVAL_SECONDS in this worker (the embedded process's or a
 * scale-out worker's). Sweeps never overlap in one process; across processes the sweep lease picks one.
 * `stop()` ends a running sweep at its next batch and waits for it.
 */
export function startRetentionSweeper(deps: Deps): { stop(): Promise<void> } {
  const { eventDays, messageDays, sweepIntervalMs } = deps.config.retention;
  if (eventDays === undefined && messageDays === undefined) return { stop: async () => undefined };
  const owner = randomBytes(8).toString('hex');
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  // A pause between batches ends at once on stop, so a shutdown never waits out a pause.
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const pause = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(pause);
        resolve();
      };
    });
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweepRetention(deps, { owner, sleep, shouldStop: () => stopped })
        .then(
          () => undefined,
          (error: unknown) => deps.logger.warn({ err: error }, 'retention sweep failed'),
        )
        .finally(() => {
          running = undefined;
          schedule(sweepIntervalMs);
        });
    }, ms);
    timer.unref();
  };
  schedule(Math.min(FIRST_SWEEP_DELAY_MS, sweepIntervalMs));
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await running;
    },
  };
}
