import type { RetentionBatch, RetentionCursor, RetentionSweepSummary } from '../../store/ports.js';
import type { Deps } from '../deps.js';

const DAY_MS = 24 * 3600 * 1000;
const LEASE = 'retention-sweep';
/** Renewed after every batch; a worker that dies mid-sweep frees the sweep for another after this long. */
const LEASE_MS = 5 * 60_000;
/** Pages given back per step (8 MB at SQLite's default 4 KiB page): one step is one short write. */
const RECLAIM_PAGES_PER_STEP = 2048;
/**
 * A batch that held the database t ms is followed by a pause of at least PAUSE_FACTOR × t, so the sweep holds it (the
 * single SQLite writer) at most 1 / (1 + PAUSE_FACTOR) of the time however slow the disk: triggers keep their rate.
 */
const PAUSE_FACTOR = 9;

export interface SweepRetentionOptions {
  /** Who sweeps (one id per worker): the lease holder. */
  owner: string;
  /** Checked between batches: true stops the sweep early (shutdown). */
  shouldStop?: () => boolean;
  sleep?: (ms: number) => Promise<void>;
}

export type RetentionDeps = Pick<Deps, 'config' | 'clock' | 'store' | 'logger' | 'realtime'>;

/** The retention in force: the cut-off times of now, undefined where history is kept forever. */
export function retentionCutoffs(deps: Pick<Deps, 'config' | 'clock'>): { events?: string; messages?: string } {
  const now = deps.clock.now();
  const { eventDays, messageDays } = deps.config.retention;
  return {
    events: eventDays === undefined ? undefined : new Date(now - eventDays * DAY_MS).toISOString(),
    messages: messageDays === undefined ? undefined : new Date(now - messageDays * DAY_MS).toISOString(),
  };
}

/**
 * One sweep: deletes the events, jobs, execution details and trigger records past HERALD_RETENTION_DAYS and the
 * messages past HERALD_MESSAGE_RETENTION_DAYS, batch by batch with pauses, then gives the freed space back (embedded).
 * Only the holder of the sweep lease sweeps, so scale-out workers take turns; the deletes are safe concurrently anyway.
 * Undefined when retention is off or another worker holds the lease.
 */
export async function sweepRetention(deps: RetentionDeps, options: SweepRetentionOptions): Promise<RetentionSweepSummary | undefined> {
  const cutoffs = retentionCutoffs(deps);
  if (cutoffs.events === undefined && cutoffs.messages === undefined) return undefined;
  const { store, config, clock } = deps;
  const iso = () => new Date(clock.now()).toISOString();
  const renew = () => store.retention.tryLease(LEASE, options.owner, new Date(clock.now() + LEASE_MS).toISOString(), iso());
  if (!(await renew())) return undefined;

  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const summary: RetentionSweepSummary = {
    owner: options.owner,
    startedAt: iso(),
    finishedAt: '',
    events: 0,
    jobs: 0,
    executionDetails: 0,
    triggers: 0,
    messages: 0,
    reclaimedPages: 0,
    interrupted: false,
  };
  const { batchSize, pauseMs } = config.retention;
  /**
   * Runs one batch, then pauses in proportion to how long the batch held the database (its transaction, not the wait
   * for it: under load the wait is long, and counting it would stall the sweep); undefined when the sweep must stop.
   */
  const batch = async <T extends RetentionBatch>(work: () => Promise<T>): Promise<{ value: T } | undefined> => {
    if (options.shouldStop?.()) return undefined;
    const value = await work();
    if (!(await renew())) return undefined;
    await sleep(Math.max(pauseMs, value.heldMs * PAUSE_FACTOR));
    return { value };
  };

  try {
    const environments = await store.tenancy.listEnvironments();
    sweep: {
      if (cutoffs.events !== undefined) {
        for (const environment of environments) {
          let cursor: RetentionCursor | undefined;
          do {
            const done = await batch(() => store.retention.deleteExpiredEvents(environment._id, cutoffs.events!, batchSize, cursor));
            if (!done) break sweep;
            summary.events += done.value.events;
            summary.jobs += done.value.jobs;
            summary.executionDetails += done.value.executionDetails;
            cursor = done.value.next;
          } while (cursor);
        }
        for (;;) {
          const done = await batch(() => store.retention.deleteExpiredTriggers(cutoffs.events!, batchSize));
          if (!done) break sweep;
          summary.triggers += done.value.deleted;
          if (done.value.deleted < batchSize) break;
        }
      }
      if (cutoffs.messages !== undefined) {
        for (const environment of environments) {
          for (;;) {
            const done = await batch(() => store.retention.deleteExpiredMessages(environment._id, cutoffs.messages!, batchSize));
            if (!done) break sweep;
            summary.messages += done.value.deleted;
            // Inboxes showing those messages drop them (and their kept answers, http/inbox-read-cache.ts) now.
            for (const subscriberRecordId of done.value.inboxes) deps.realtime.messagesChanged({ environmentId: environment._id, subscriberRecordId });
            if (done.value.deleted < batchSize) break;
          }
        }
      }
      for (;;) {
        const done = await batch(() => store.retention.reclaimSpace(RECLAIM_PAGES_PER_STEP));
        if (!done) break sweep;
        summary.reclaimedPages += done.value.pages;
        if (done.value.pages < RECLAIM_PAGES_PER_STEP) break;
      }
      summary.finishedAt = iso();
    }
    if (!summary.finishedAt) {
      summary.interrupted = true;
      summary.finishedAt = iso();
    }
    await store.retention.saveLastSweep(summary);
    const deleted = summary.events + summary.triggers + summary.messages;
    if (deleted > 0 || summary.interrupted) deps.logger.info({ retentionSweep: summary }, 'retention sweep finished');
    return summary;
  } finally {
    await store.retention.releaseLease(LEASE, options.owner);
  }
}
