/**
 * The queue contract between the API and the worker. Two implementations: `sql-queue.ts` (jobs are
 * rows in the database, the embedded default) and `bullmq-queue.ts` (Redis, scale-out). Delivery is
 * at least once: a handler may see a job again after a crash, so handlers are idempotent.
 */
export interface EnqueueOptions {
  /** Run no earlier than this many ms from now. */
  delayMs?: number;
  /** Total attempts for a job whose handler throws a retryable error (default from config). */
  attempts?: number;
  /** First retry delay; doubles per attempt (exponential backoff). */
  backoffMs?: number;
  /** Enqueuing the same key again while the first is known is a no-op (BullMQ jobId). */
  dedupeKey?: string;
}

export interface QueuedJob<P = unknown> {
  id: string;
  name: string;
  payload: P;
  /** 1 on the first run. */
  attempt: number;
  maxAttempts: number;
}

/** Thrown by a handler to ask for a retry (when attempts remain); any other error also retries. */
export class RetryableJobError extends Error {}
/** Thrown by a handler to fail the job at once, without retries. */
export class PermanentJobError extends Error {}

export type JobHandler = (job: QueuedJob) => Promise<void>;

export interface JobQueue {
  enqueue(name: string, payload: unknown, options?: EnqueueOptions): Promise<void>;
  /**
   * `enqueue` for many jobs of one name, in a few round trips instead of one per job (each still deduplicated by its
   * key). For bulk re-enqueues such as the accepted-trigger sweep; nothing is taken for processing inside the call.
   */
  enqueueMany(name: string, jobs: ReadonlyArray<{ payload: unknown; options?: EnqueueOptions }>): Promise<void>;
  /**
   * `enqueue` for a job that reads what `write` (a store write already under way) stores. Where the job lands in the
   * same commit as the write (the SQL queue on SQLite's group commit) it is stored alongside instead of after it, one
   * commit wait instead of two, and starts only once `write` has committed; elsewhere it waits for `write` first.
   */
  enqueueAlongside?(write: Promise<unknown>, name: string, payload: unknown, options?: EnqueueOptions): Promise<void>;
  /**
   * Jobs run at once from now on, for a queue that is consuming (BullMQ's, scale-out: the worker yields the CPU with it,
   * src/worker/cpu-yield.ts). Running jobs go on; a lower limit starts no more until enough of them end.
   */
  setConcurrency?(concurrency: number): void;
  /** Starts consuming with `concurrency` jobs at once. */
  start(handler: JobHandler, options: { concurrency: number }): Promise<void>;
  /** Stops taking jobs, waits for running ones (or returns them to the queue after `graceMs`). */
  close(options?: { graceMs?: number }): Promise<void>;
  /** Throws when the queue backend cannot be reached. */
  ping(): Promise<void>;
  /** Jobs by state and the age of the oldest due one, read at scrape time (`herald_queue_jobs`). */
  stats?(): Promise<QueueStats>;
}

export interface QueueStats {
  /** Due and not taken yet. */
  waiting: number;
  /** Due later (a delay, a retry's backoff). */
  delayed: number;
  active: number;
  /** Failed for good (kept for inspection). */
  failed: number;
  /** How long the oldest due job has waited, in ms; 0 when none waits. */
  oldestWaitingMs: number;
}
