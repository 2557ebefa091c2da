import { sql, type Kysely, type Selectable } from 'kysely';
import type { Clock } from '../domain/clock.js';
import { newId } from '../domain/ids.js';
import type { Logger } from '../usecases/deps.js';
import type { Database, QueueJobsTable } from '../store/sql/schema.js';
import { ReusableInsert, ReusableQuery } from '../store/sql/reusable-query.js';
import type { SqlDialectName } from '../store/sql/sql-store.js';
import { PermanentJobError, type EnqueueOptions, type JobHandler, type JobQueue, type QueuedJob, type QueueStats } from './ports.js';

type QueueRow = Selectable<QueueJobsTable>;

export interface SqlQueueOptions {
  /** The database's dialect: its hot statements are compiled once per dialect (see ReusableQuery). */
  dialect: SqlDialectName;
  clock: Clock;
  logger: Logger;
  /** How often to look for due jobs when nothing woke the queue. */
  pollIntervalMs: number;
  defaultAttempts: number;
  /** First retry delay; doubles per attempt. */
  backoffMs: number;
  /**
   * How long a claimed job stays ours without a heartbeat. A crashed process's jobs return to the queue
   * once it runs out; a live process renews it every third of it.
   */
  leaseMs?: number;
}

const DEFAULT_LEASE_MS = 10_000;

/**
 * The embedded queue: jobs are rows of `queue_jobs` in the same database as everything else, so an
 * accepted job survives a crash. A job is claimed with a lease (`locked_until`); it is deleted when its
 * handler succeeds, retried with exponential backoff when it throws, and kept as `failed` when attempts
 * run out. `enqueue` wakes the consumer of this process at once, so nothing waits for the poll.
 */
export class SqlQueue implements JobQueue {
  private handler?: JobHandler;
  private concurrency = 1;
  private readonly running = new Map<string, Promise<void>>();
  private readonly leaseMs: number;
  private pollTimer?: NodeJS.Timeout;
  private heartbeatTimer?: NodeJS.Timeout;
  /** Slots promised to jobs being stored claimed by `enqueue`. */
  private reserved = 0;
  private pumping = false;
  private pumpAgain = false;
  private wakeScheduled = false;
  private closing?: Promise<void>;
  /** The pump's loop while it runs: close() waits for its claim, whose rows it hands back rather than start. */
  private pumped?: Promise<void>;
  private serving?: () => boolean;
  private concurrencyWhileServing = Infinity;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlQueueOptions,
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /**
   * Stores the job. When this process consumes the queue and has a free slot, a job due now is stored already
   * claimed (active, with a lease) and started at once: it is as durable as a waiting row, and saves the claim
   * statement and a turn of the event loop per job.
   */
  async enqueue(name: string, payload: unknown, options: EnqueueOptions = {}, startAfter?: Promise<unknown>): Promise<void> {
    const now = this.options.clock.now();
    const takeAtOnce = Math.max(0, options.delayMs ?? 0) === 0 && this.hasFreeSlot();
    // A waiting row could be claimed before the write it reads is stored: it follows the write.
    if (startAfter && !takeAtOnce) await startAfter;
    if (takeAtOnce) this.reserved++;
    try {
      const [inserted] = (await insertJob.execute(this.db, this.options.dialect, [this.newRow(name, payload, options, now, takeAtOnce)])).rows as QueueRow[];
      // A failed write leaves a job that finds nothing to do (the caller learns of the failure from the write).
      if (startAfter) await startAfter.catch(() => undefined);
      if (takeAtOnce && inserted && !this.closing) {
        this.track(inserted);
        return;
      }
      if (takeAtOnce && inserted) await this.release([inserted.id]);
    } finally {
      if (takeAtOnce) this.reserved--;
    }
    this.wake();
  }

  /**
   * SQLite: the job row is written in the same group commit as `write` (statements of one event-loop turn commit
   * together, and a later group never commits before an earlier one), and a job taken at once starts after `write`
   * has committed. PostgreSQL commits each write on its own: there the job follows the write.
   */
  async enqueueAlongside(write: Promise<unknown>, name: string, payload: unknown, options: EnqueueOptions = {}): Promise<void> {
    if (this.options.dialect !== 'sqlite') {
      await write;
      return this.enqueue(name, payload, options);
    }
    return this.enqueue(name, payload, options, write);
  }

  async enqueueMany(name: string, jobs: ReadonlyArray<{ payload: unknown; options?: EnqueueOptions }>): Promise<void> {
    const now = this.options.clock.now();
    const rows = jobs.map(({ payload, options = {} }) => this.newRow(name, payload, options, now, false));
    for (let start = 0; start < rows.length; start += ENQUEUE_BATCH) {
      await insertJob.execute(this.db, this.options.dialect, rows.slice(start, start + ENQUEUE_BATCH));
    }
    if (rows.length > 0) this.wake();
  }

  /** A new job's row: `waiting`, or already `active` under this process's lease when it is taken at once. */
  private newRow(name: string, payload: unknown, options: EnqueueOptions, now: number, takeAtOnce: boolean): QueueJobsTable {
    const createdAt = new Date(now).toISOString();
    return {
      id: newId(now),
      name,
      payload: JSON.stringify(payload ?? null),
      run_at: new Date(now + Math.max(0, options.delayMs ?? 0)).toISOString(),
      attempts: takeAtOnce ? 1 : 0,
      max_attempts: Math.max(1, options.attempts ?? this.options.defaultAttempts),
      state: takeAtOnce ? 'active' : 'waiting',
      locked_until: takeAtOnce ? new Date(now + this.leaseMs).toISOString() : null,
      last_error: null,
      dedupe_key: options.dedupeKey ?? null,
      backoff_ms: options.backoffMs ?? null,
      created_at: createdAt,
      updated_at: createdAt,
    };
  }

  private hasFreeSlot(): boolean {
    return this.handler !== undefined && !this.closing && this.running.size + this.reserved < this.slots();
  }

  /**
   * Embedded, the API and the worker share one process's CPU. While `serving()` says the API is answering requests,
   * at most `concurrency` jobs run (at least one: the queue is never starved); the rest wait as rows, claimed in
   * batches once the burst ends. Jobs ending re-check this, and so does the poll.
   */
  shareWith(serving: () => boolean, concurrency: number): void {
    this.serving = serving;
    this.concurrencyWhileServing = Math.max(1, concurrency);
  }

  private slots(): number {
    return this.serving?.() ? Math.min(this.concurrency, this.concurrencyWhileServing) : this.concurrency;
  }

  async start(handler: JobHandler, options: { concurrency: number }): Promise<void> {
    if (this.handler) throw new Error('queue already started');
    this.handler = handler;
    this.concurrency = Math.max(1, options.concurrency);
    const poll = () => {
      void this.releaseExpiredLeases()
        .catch((error) => this.options.logger.warn({ err: error }, 'could not release expired job leases'))
        .finally(() => this.pump());
      this.pollTimer = setTimeout(poll, this.options.pollIntervalMs);
      this.pollTimer.unref();
    };
    poll();
    this.heartbeatTimer = setInterval(() => void this.renewLeases(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.heartbeatTimer.unref();
  }

  /** Looks for due jobs now (coalesced: a burst of enqueues costs one claim). Also for tests after moving a manual clock. */
  wake(): void {
    if (!this.handler || this.closing || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.pump();
    });
  }

  close(options: { graceMs?: number } = {}): Promise<void> {
    return (this.closing ??= this.drain(options.graceMs ?? 10_000));
  }

  async ping(): Promise<void> {
    await this.db.selectFrom('queue_jobs').select('id').limit(1).execute();
  }

  /** Jobs waiting or running (tests and the benchmark wait for this to reach zero). */
  async pendingCount(): Promise<number> {
    const row = await this.db
      .selectFrom('queue_jobs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('state', 'in', ['waiting', 'active'])
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** Two reads answered by the (state, run_at) index: rows per state, then the due ones and the oldest of them. */
  async stats(): Promise<QueueStats> {
    const now = this.options.clock.now();
    const [byState, due] = await Promise.all([
      this.db
        .selectFrom('queue_jobs')
        .select((eb) => ['state', eb.fn.countAll<number>().as('count')])
        .groupBy('state')
        .execute(),
      this.db
        .selectFrom('queue_jobs')
        .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min('run_at').as('oldest')])
        .where('state', '=', 'waiting')
        .where('run_at', '<=', new Date(now).toISOString())
        .executeTakeFirstOrThrow(),
    ]);
    const count = (state: string) => Number(byState.find((row) => row.state === state)?.count ?? 0);
    const waiting = Number(due.count);
    const oldest = due.oldest ? Date.parse(String(due.oldest)) : NaN;
    return {
      waiting,
      delayed: count('waiting') - waiting,
      active: count('active'),
      failed: count('failed'),
      oldestWaitingMs: Number.isNaN(oldest) ? 0 : Math.max(0, now - oldest),
    };
  }

  private async drain(graceMs: number): Promise<void> {
    clearTimeout(this.pollTimer);
    clearInterval(this.heartbeatTimer);
    // A claim still running hands its rows back (see `pump`); wait for that before the caller closes the database.
    await this.pumped;
    if (this.running.size === 0) return;
    let graceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => {
      graceTimer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const outcome = await Promise.race([Promise.allSettled([...this.running.values()]).then(() => 'done' as const), graceOver]);
    clearTimeout(graceTimer);
    if (outcome === 'timeout' && this.running.size > 0) {
      // Hand the unfinished jobs back now rather than when their lease runs out; their steps are idempotent.
      const ids = [...this.running.keys()];
      await this.release(ids);
      this.options.logger.warn({ jobs: ids.length }, 'queue closed with running jobs; returned them to the queue');
    }
  }

  private pump(): void {
    if (!this.handler || this.closing) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    this.pumped = (async () => {
      try {
        do {
          this.pumpAgain = false;
          while (this.hasFreeSlot()) {
            const rows = await this.claim(this.slots() - this.running.size - this.reserved);
            if (this.closing) {
              // close() began while the claim ran: no job starts after it. Handed back now (attempt not spent), so the
              // next start takes them at once instead of after their lease.
              if (rows.length > 0) await this.release(rows.map((row) => row.id));
              return;
            }
            for (const row of rows) this.track(row);
            if (rows.length === 0) break;
          }
        } while (this.pumpAgain && !this.closing);
      } catch (error) {
        if (!this.closing) this.options.logger.error({ err: error }, 'queue claim failed');
      } finally {
        this.pumping = false;
      }
    })();
  }

  /** Takes up to `limit` waiting jobs whose time has come (claimDue). */
  private async claim(limit: number): Promise<QueueRow[]> {
    const now = this.options.clock.now();
    const claimed = await claimDue.execute(this.db, this.options.dialect, {
      now: new Date(now).toISOString(),
      lockedUntil: new Date(now + this.leaseMs).toISOString(),
      limit,
    });
    return claimed.rows as QueueRow[];
  }

  /**
   * Returns to the queue the jobs whose lease ran out (their process died), so the next claim takes them.
   * Checked on the poll timer rather than on every claim: it is rare, and an OR of both conditions in the
   * claim kept SQLite from using the index (1.5 ms per claim with a 6,000-job backlog).
   */
  private async releaseExpiredLeases(): Promise<void> {
    const nowIso = this.isoNow();
    const runningIds = [...this.running.keys()];
    // A read first: an UPDATE, even one that matches nothing, would cost a commit on every poll.
    const expired = await this.db
      .selectFrom('queue_jobs')
      .select('id')
      .where('state', '=', 'active')
      .where('locked_until', '<', nowIso)
      .$if(runningIds.length > 0, (qb) => qb.where('id', 'not in', runningIds))
      .limit(1)
      .executeTakeFirst();
    if (!expired) return;
    await this.db
      .updateTable('queue_jobs')
      .set({ state: 'waiting', locked_until: null, updated_at: nowIso })
      .where('state', '=', 'active')
      .where('locked_until', '<', nowIso)
      .$if(runningIds.length > 0, (qb) => qb.where('id', 'not in', runningIds))
      .execute();
  }

  private track(row: QueueRow): void {
    const done = this.run(row).finally(() => {
      this.running.delete(row.id);
      // Coalesced: the jobs that end in one event-loop turn share one claim.
      this.wake();
    });
    this.running.set(row.id, done);
  }

  private async run(row: QueueRow): Promise<void> {
    const job: QueuedJob = {
      id: row.id,
      name: row.name,
      payload: JSON.parse(row.payload),
      attempt: Number(row.attempts),
      maxAttempts: Number(row.max_attempts),
    };
    try {
      await this.handler!(job);
      await deleteJob.execute(this.db, this.options.dialect, { id: row.id });
    } catch (error) {
      await this.fail(job, error, row.backoff_ms ?? this.options.backoffMs).catch((failError) =>
        this.options.logger.error({ err: failError, jobId: job.id }, 'could not record a job failure'),
      );
    }
  }

  private async fail(job: QueuedJob, error: unknown, backoffMs: number): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    const final = error instanceof PermanentJobError || job.attempt >= job.maxAttempts;
    const now = this.options.clock.now();
    if (final) {
      this.options.logger.error({ jobId: job.id, name: job.name, attempt: job.attempt, error: message }, 'job failed');
      await this.db
        .updateTable('queue_jobs')
        .set({ state: 'failed', locked_until: null, last_error: message.slice(0, 2000), updated_at: new Date(now).toISOString() })
        .where('id', '=', job.id)
        .execute();
      return;
    }
    const delayMs = backoffMs * 2 ** (job.attempt - 1);
    this.options.logger.warn({ jobId: job.id, name: job.name, attempt: job.attempt, retryInMs: delayMs, error: message }, 'job will retry');
    await this.db
      .updateTable('queue_jobs')
      .set({
        state: 'waiting',
        locked_until: null,
        run_at: new Date(now + delayMs).toISOString(),
        last_error: message.slice(0, 2000),
        updated_at: new Date(now).toISOString(),
      })
      .where('id', '=', job.id)
      .execute();
  }

  /** Hands claimed jobs back to the queue without spending an attempt. */
  private async release(ids: string[]): Promise<void> {
    await this.db
      .updateTable('queue_jobs')
      .set({ state: 'waiting', locked_until: null, attempts: sql`attempts - 1`, updated_at: this.isoNow() })
      .where('id', 'in', ids)
      .where('state', '=', 'active')
      .execute();
  }

  private async renewLeases(): Promise<void> {
    if (this.running.size === 0 || this.closing) return;
    const now = this.options.clock.now();
    try {
      await this.db
        .updateTable('queue_jobs')
        .set({ locked_until: new Date(now + this.leaseMs).toISOString() })
        .where('id', 'in', [...this.running.keys()])
        .where('state', '=', 'active')
        .execute();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not renew job leases');
    }
  }

  private isoNow(): string {
    return new Date(this.options.clock.now()).toISOString();
  }
}

/** Rows per multi-row insert of enqueueMany (13 parameters each, well under either database's limit). */
const ENQUEUE_BATCH = 200;

// The statements run for every job, compiled once (see ReusableQuery).
const insertJob = new ReusableInsert('queue_jobs', (query) => query.onConflict((oc) => oc.column('dedupe_key').doNothing()).returningAll());
const deleteJob = new ReusableQuery((db, p: { id: string }) => db.deleteFrom('queue_jobs').where('id', '=', p.id));
/**
 * Takes up to `limit` waiting jobs whose time has come, oldest first, in one statement that the (state, run_at) index
 * answers without reading the backlog. Compiled once: built per claim, Kysely's builder and compiler were ~2 % of an
 * embedded drain's CPU (BENCHMARKS.md session 29).
 */
const claimDue = new ReusableQuery((db, p: { now: string; lockedUntil: string; limit: number }) => {
  const due = db.selectFrom('queue_jobs').select('id').where('state', '=', 'waiting').where('run_at', '<=', p.now).orderBy('run_at').limit(p.limit);
  return (
    db
      .updateTable('queue_jobs')
      .set({ state: 'active', locked_until: p.lockedUntil, attempts: sql`attempts + 1`, updated_at: p.now })
      .where('id', 'in', due)
      // Guards against a concurrent claim (PostgreSQL without Redis). Written as an expression so that SQLite finds
      // the rows by primary key rather than through the state index, which read the whole backlog (1.7 ms a claim).
      .where(sql<string>`state || ''`, '=', 'waiting')
      .returningAll()
  );
});
