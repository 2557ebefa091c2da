import { DelayedError, Job, Queue, UnrecoverableError, Worker, type JobType, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { UnavailableError } from '../domain/errors.js';
import type { Logger } from '../usecases/deps.js';
import { PermanentJobError, RetryableJobError, type EnqueueOptions, type JobHandler, type JobQueue, type QueuedJob, type QueueStats } from './ports.js';
import { guarded, openRedis, waitUntilReady } from '../store/redis/connection.js';
import { allFulfilled, CoalescedBatches } from '../store/coalesced-batches.js';

export interface BullMqQueueOptions {
  redisUrl: string;
  /** Redis key prefix: every key of this Herald instance lives under it (one Redis can serve several). */
  prefix: string;
  logger: Logger;
  defaultAttempts: number;
  /** First retry delay; doubles per attempt. */
  backoffMs: number;
  /**
   * The command connection (fail-fast, shared with the Redis stores). Opened from `redisUrl` when
   * absent; a given connection is not closed by `close()`.
   */
  connection?: Redis;
  /** How long a worker's lock on a running job lasts; a crashed worker's jobs return after it. */
  lockDurationMs?: number;
  /**
   * A job whose handler fails because a backend cannot be reached runs again after this long (plus up to as
   * much jitter) without using up an attempt. Default 2000.
   */
  unavailableRetryMs?: number;
  /** Finished jobs are kept this long so a dedupeKey stays known (and for inspection). */
  keepCompletedSeconds?: number;
  keepFailedSeconds?: number;
}

const QUEUE_NAME = 'jobs';
/** Jobs per addBulk call of enqueueMany. */
const ENQUEUE_BATCH = 500;

/**
 * The JobQueue over BullMQ (scale-out mode). One BullMQ queue per Herald instance under `prefix`;
 * the Herald job name is the BullMQ job name. Retries use BullMQ's exponential backoff; a
 * PermanentJobError becomes BullMQ's UnrecoverableError so it is not retried. A dedupeKey becomes the
 * BullMQ jobId, which BullMQ ignores while a job with that id exists.
 */
export class BullMqQueue implements JobQueue {
  private readonly connection: Redis;
  private readonly ownsConnection: boolean;
  private readonly queue: Queue;
  private worker?: Worker;
  private workerConnection?: Redis;
  /** Running jobs and their lock tokens, to hand them back if close() runs out of grace. */
  private readonly running = new Map<string, { job: Job; token: string; done: Promise<unknown> }>();
  private closing?: Promise<void>;
  private readonly connected: Promise<void>;
  /** Adds coalesced while one is in flight (see enqueue). */
  private readonly adds = new CoalescedBatches<{ name: string; data: unknown; opts: JobsOptions }, void>(async (jobs) => {
    const [first] = jobs;
    if (jobs.length === 1) await guarded(this.connection, () => this.queue.add(first!.name, first!.data, first!.opts));
    // addBulk throws on the first failed add of its pipeline: every caller of the batch fails, as a timed-out add does
    // (its job may be stored; a retry finds it by jobId, and an accepted trigger is swept up by the worker).
    else await guarded(this.connection, () => this.queue.addBulk(jobs));
    return allFulfilled(jobs.length, undefined);
  }, ENQUEUE_BATCH);

  constructor(private readonly options: BullMqQueueOptions) {
    this.ownsConnection = !options.connection;
    this.connection = options.connection ?? openRedis(options.redisUrl, 'command');
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection, prefix: options.prefix });
    this.queue.on('error', (error) => options.logger.warn({ err: error }, 'job queue connection error'));
    // The fail-fast connection rejects commands until its first connect; later outages fail at once (503).
    this.connected = waitUntilReady(this.connection).catch(() => undefined);
  }

  /**
   * Adds arriving while an add is in flight wait for it and then go together in one addBulk (one MULTI, one round
   * trip, a pipeline): under load the API's triggers share their Redis round trips, and alone an add goes out at once, so no
   * delay is added. Each caller's promise settles when its own job is in Redis (or the batch failed), so a trigger
   * is answered only once its job is stored.
   */
  async enqueue(name: string, payload: unknown, options: EnqueueOptions = {}): Promise<void> {
    await this.whenConnected();
    await this.adds.run({ name, data: payload, opts: this.jobOptions(options) });
  }

  /** BullMQ's addBulk: one MULTI per ENQUEUE_BATCH jobs, each added (or found by its jobId) as `add` would. */
  async enqueueMany(name: string, jobs: ReadonlyArray<{ payload: unknown; options?: EnqueueOptions }>): Promise<void> {
    if (jobs.length === 0) return;
    await this.whenConnected();
    for (let start = 0; start < jobs.length; start += ENQUEUE_BATCH) {
      const batch = jobs.slice(start, start + ENQUEUE_BATCH).map(({ payload, options = {} }) => ({ name, data: payload, opts: this.jobOptions(options) }));
      await guarded(this.connection, () => this.queue.addBulk(batch));
    }
  }

  private jobOptions(options: EnqueueOptions): JobsOptions {
    return {
      delay: options.delayMs && options.delayMs > 0 ? options.delayMs : undefined,
      attempts: options.attempts ?? this.options.defaultAttempts,
      backoff: { type: 'exponential', delay: options.backoffMs ?? this.options.backoffMs },
      jobId: options.dedupeKey === undefined ? undefined : toJobId(options.dedupeKey),
      removeOnComplete: { age: this.options.keepCompletedSeconds ?? 24 * 3600 },
      removeOnFail: { age: this.options.keepFailedSeconds ?? 7 * 24 * 3600 },
    };
  }

  async start(handler: JobHandler, options: { concurrency: number }): Promise<void> {
    if (this.worker) throw new Error('the queue is already consuming');
    this.workerConnection = openRedis(this.options.redisUrl, 'worker');
    const lockDuration = this.options.lockDurationMs ?? 30_000;
    this.worker = new Worker(
      QUEUE_NAME,
      async (job, token) => {
        const key = job.id ?? '';
        const done = handler(toQueuedJob(job));
        this.running.set(key, { job, token: token ?? '', done });
        try {
          await done;
        } catch (error) {
          if (error instanceof PermanentJobError) throw new UnrecoverableError(error.message);
          if (isBackendUnavailable(error) && (await this.postpone(job, token))) throw new DelayedError();
          throw error;
        } finally {
          this.running.delete(key);
        }
      },
      {
        connection: this.workerConnection,
        prefix: this.options.prefix,
        concurrency: options.concurrency,
        lockDuration,
        stalledInterval: lockDuration,
        // A job whose worker died returns to the queue rather than failing (handlers are idempotent).
        maxStalledCount: 10,
      },
    );
    this.worker.on('error', (error) => this.options.logger.warn({ err: error }, 'job worker connection error'));
    this.worker.on('failed', (job, error) => {
      if (job) this.options.logger.warn({ jobId: job.id, name: job.name, attempt: job.attemptsMade, err: error }, 'job attempt failed');
    });
    await this.worker.waitUntilReady();
  }

  /**
   * Jobs this worker runs at once from now on (BullMQ's own setter): running jobs go on; a lower limit stops fetching
   * until enough of them end, a higher one fetches more as the next job ends. Before `start`, nothing.
   */
  setConcurrency(concurrency: number): void {
    if (this.worker && !this.closing) this.worker.concurrency = Math.max(1, Math.floor(concurrency));
  }

  close(options: { graceMs?: number } = {}): Promise<void> {
    return (this.closing ??= this.closeOnce(options.graceMs));
  }

  private async closeOnce(graceMs?: number): Promise<void> {
    if (this.worker) {
      // close() stops fetching at once (it drops the blocking connection) and resolves when running jobs end.
      const drained = this.worker.close();
      drained.catch((error: unknown) => this.options.logger.warn({ err: error }, 'job worker close failed'));
      const workerConnection = this.workerConnection;
      if (graceMs === undefined || (await settlesWithin(drained, graceMs))) {
        await drained;
        workerConnection?.disconnect();
      } else {
        // Out of grace: hand the running jobs back now rather than when their locks lapse. A handler still
        // running finishes in the background; its outcome is discarded (handlers are idempotent). Its worker
        // keeps its connection until then: pulling it from under a live worker makes BullMQ spin.
        await Promise.all([...this.running.values()].map((entry) => this.returnToQueue(entry.job, entry.token)));
        // Its failure is logged above; the promise `finally` makes would carry it on, unhandled.
        void drained.finally(() => workerConnection?.disconnect()).catch(() => undefined);
      }
    }
    await this.queue.close().catch(() => undefined);
    if (this.ownsConnection) this.connection.disconnect();
  }

  /**
   * An outage of PostgreSQL (or Redis) says nothing about the job: counted as attempts, a restart longer than
   * the backoff budget would fail every job in flight for good. Such a job waits and runs again with its
   * attempts intact. False when it could not be moved (Redis is down too): the failure then counts.
   */
  private async postpone(job: Job, token: string | undefined): Promise<boolean> {
    const base = this.options.unavailableRetryMs ?? 2000;
    try {
      await job.moveToDelayed(Date.now() + base + Math.floor(Math.random() * base), token);
      return true;
    } catch {
      return false;
    }
  }

  private async returnToQueue(job: Job, token: string): Promise<void> {
    try {
      const stored = await Job.fromId(this.queue, job.id ?? '');
      await stored?.moveToWait(token);
    } catch (error) {
      this.options.logger.warn({ err: error, jobId: job.id }, 'could not return a running job; it returns when its lock lapses');
    }
  }

  /** Jobs waiting, delayed or running (tests and the benchmark wait for this to reach zero). */
  async pendingCount(options: { ignoreDelayed?: boolean } = {}): Promise<number> {
    await this.whenConnected();
    const states: JobType[] = ['waiting', 'active', 'prioritized', 'waiting-children', ...(options.ignoreDelayed ? [] : (['delayed'] as const))];
    const counts = await guarded(this.connection, () => this.queue.getJobCounts(...states));
    return Object.values(counts).reduce((sum, count) => sum + Number(count), 0);
  }

  /**
   * BullMQ's counts; the oldest waiting job is the tail of its wait list (due since it was added, or since its
   * delay ended).
   */
  async stats(): Promise<QueueStats> {
    await this.whenConnected();
    const [counts, [oldest]] = await guarded(this.connection, () =>
      Promise.all([this.queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'failed'), this.queue.getJobs(['wait'], 0, 0, true)]),
    );
    const now = Date.now();
    const dueSince = oldest ? oldest.timestamp + (oldest.delay ?? 0) : undefined;
    return {
      waiting: Number(counts.waiting ?? 0) + Number(counts.prioritized ?? 0),
      delayed: Number(counts.delayed ?? 0),
      active: Number(counts.active ?? 0),
      failed: Number(counts.failed ?? 0),
      oldestWaitingMs: dueSince === undefined ? 0 : Math.max(0, now - dueSince),
    };
  }

  /**
   * Waits for the first connect only; afterwards a connection that is not ready fails at once, because
   * BullMQ would otherwise wait for it to come back and the request would hang instead of answering 503.
   */
  private async whenConnected(): Promise<void> {
    await this.connected;
    if (this.connection.status !== 'ready') throw new UnavailableError('Service temporarily unavailable: the job queue cannot be reached');
  }

  async ping(): Promise<void> {
    await this.whenConnected();
    await guarded(this.connection, () => this.connection.ping());
  }
}

function toQueuedJob(job: Job): QueuedJob {
  return {
    id: job.id ?? '',
    name: job.name,
    payload: job.data,
    attempt: job.attemptsMade + 1,
    maxAttempts: job.opts.attempts ?? 1,
  };
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH',
  // PostgreSQL: admin/crash shutdown, cannot connect now, connection exceptions.
  '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006',
]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|not queryable|Client was closed|timeout exceeded when trying to connect|Connection is closed|connect ECONNREFUSED/i;

/**
 * True for errors that mean PostgreSQL or Redis cannot be reached right now, not that the job is at fault.
 * A RetryableJobError is the dispatcher's verdict on a run it could record (a vendor that is down, say):
 * that one uses up an attempt.
 */
export function isBackendUnavailable(error: unknown): boolean {
  if (error instanceof RetryableJobError) return false;
  if (error instanceof UnavailableError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  return UNAVAILABLE_MESSAGE.test(error instanceof Error ? error.message : String(error));
}

/**
 * BullMQ refuses custom ids that contain ':' or look like integers: escape ':' (and the escape
 * character) reversibly and add a non-numeric marker, so distinct keys stay distinct.
 */
export function toJobId(dedupeKey: string): string {
  return 'k_' + dedupeKey.replace(/%/g, '%25').replace(/:/g, '%3A');
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
