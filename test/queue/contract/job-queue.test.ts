import { afterEach, describe, expect, it } from 'vitest';
import { PermanentJobError, RetryableJobError, type EnqueueOptions, type JobQueue, type QueuedJob } from '../../../src/queue/ports.js';
import { BullMqQueue } from '../../../src/queue/bullmq-queue.js';
import type { Logger } from '../../../src/usecases/deps.js';
import { SqlQueue } from '../../../src/queue/sql-queue.js';
import { openTestPostgres, openTestRedis, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { systemClock } from '../../../src/domain/clock.js';

/**
 * One JobQueue contract, every implementation: the SQL queue (jobs table) and BullMQ (Redis).
 * A backend is one isolated store (a fresh SQLite file or Redis prefix); `open()` can be called several
 * times on it to get several queue instances, as separate API/worker processes would.
 */
interface Backend {
  open(options: { attempts: number; backoffMs: number }): JobQueue;
  dispose(): Promise<void>;
}

interface Implementation {
  name: string;
  available: boolean;
  backend(): Promise<Backend>;
}

const silentLogger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
  child: () => silentLogger,
};

const implementations: Implementation[] = [
  {
    name: 'SqlQueue on SQLite',
    available: true,
    async backend() {
      const database = await openTestSqlite();
      return {
        open: ({ attempts, backoffMs }) =>
          new SqlQueue(database.db, { dialect: database.dialect, clock: systemClock, logger: silentLogger, pollIntervalMs: 20, defaultAttempts: attempts, backoffMs }),
        dispose: database.close,
      };
    },
  },
  {
    name: 'SqlQueue on PostgreSQL',
    available: await servicesAvailable(['PostgreSQL']),
    async backend() {
      const database = await openTestPostgres();
      return {
        open: ({ attempts, backoffMs }) =>
          new SqlQueue(database.db, { dialect: database.dialect, clock: systemClock, logger: silentLogger, pollIntervalMs: 20, defaultAttempts: attempts, backoffMs }),
        dispose: database.close,
      };
    },
  },
  {
    name: 'BullMqQueue',
    available: await servicesAvailable(['Redis']),
    async backend() {
      const redis = await openTestRedis();
      return {
        open: ({ attempts, backoffMs }) =>
          new BullMqQueue({ redisUrl: redis.url, prefix: redis.prefix, logger: silentLogger, defaultAttempts: attempts, backoffMs, lockDurationMs: 5000 }),
        dispose: redis.close,
      };
    },
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` until true; fails after `timeoutMs` (tests stay bounded in time). */
async function waitFor(condition: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

interface Run {
  job: QueuedJob;
  at: number;
}

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`JobQueue contract: ${implementation.name}`, () => {
    const opened: JobQueue[] = [];
    let backend: Backend | undefined;

    async function queueOn(options = { attempts: 3, backoffMs: 50 }): Promise<JobQueue> {
      backend ??= await implementation.backend();
      const queue = backend.open(options);
      opened.push(queue);
      return queue;
    }

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((queue) => queue.close({ graceMs: 100 })));
      await backend?.dispose();
      backend = undefined;
    });

    /** Starts consuming with a handler that records each run and then does `behaviour`. */
    async function consume(queue: JobQueue, behaviour: (job: QueuedJob) => Promise<void> = async () => undefined): Promise<Run[]> {
      const runs: Run[] = [];
      await queue.start(
        async (job) => {
          runs.push({ job, at: Date.now() });
          await behaviour(job);
        },
        { concurrency: 2 },
      );
      return runs;
    }

    it('runs an enqueued job once with its name and payload', async () => {
      const queue = await queueOn();
      await queue.enqueue('contract.plain', { triggerId: 'abc', n: 1 });
      const runs = await consume(queue);
      await waitFor(() => runs.length === 1, 10_000, 'the job to run');
      await sleep(100);
      expect(runs).toHaveLength(1);
      expect(runs[0].job).toMatchObject({ name: 'contract.plain', payload: { triggerId: 'abc', n: 1 }, attempt: 1, maxAttempts: 3 });
      expect(typeof runs[0].job.id).toBe('string');
    });

    it('hands jobs enqueued by one instance to a consumer on another (API and worker processes)', async () => {
      const api = await queueOn();
      const worker = await queueOn();
      const runs = await consume(worker);
      await api.enqueue('contract.crossProcess', { n: 2 });
      await waitFor(() => runs.length === 1, 10_000, 'the job to run');
      expect(runs[0].job.payload).toEqual({ n: 2 });
    });

    it('stats() counts jobs by state and the age of the oldest due one (herald_queue_jobs)', async () => {
      const queue = await queueOn({ attempts: 1, backoffMs: 50 });
      expect(await queue.stats!()).toEqual({ waiting: 0, delayed: 0, active: 0, failed: 0, oldestWaitingMs: 0 });
      await queue.enqueue('contract.stats', { n: 1 });
      await queue.enqueue('contract.stats', { n: 2 });
      await queue.enqueue('contract.stats', { n: 3 }, { delayMs: 60_000 });
      await sleep(300);
      const waiting = await queue.stats!();
      expect(waiting).toMatchObject({ waiting: 2, delayed: 1, active: 0, failed: 0 });
      expect(waiting.oldestWaitingMs).toBeGreaterThanOrEqual(250);
      expect(waiting.oldestWaitingMs).toBeLessThan(10_000);

      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const runs = await consume(queue, async (job) => {
        if ((job.payload as { n: number }).n === 1) throw new PermanentJobError('no');
        await held;
      });
      await waitFor(() => runs.length === 2, 10_000, 'both due jobs to start');
      // Until the first job's failure is recorded (a fixed 200 ms could be too short for it on a loaded machine).
      await expect.poll(() => queue.stats!(), { timeout: 10_000 }).toEqual({ waiting: 0, delayed: 1, active: 1, failed: 1, oldestWaitingMs: 0 });
      release();
    });

    it('does not run a delayed job before its delay', async () => {
      const queue = await queueOn();
      const runs = await consume(queue);
      const enqueuedAt = Date.now();
      await queue.enqueue('contract.delayed', { n: 3 }, { delayMs: 400 });
      await waitFor(() => runs.length === 1, 10_000, 'the delayed job to run');
      expect(runs[0].at - enqueuedAt).toBeGreaterThanOrEqual(390);
    });

    it('retries a failing job with exponential backoff, counting attempts', async () => {
      const queue = await queueOn({ attempts: 3, backoffMs: 100 });
      const runs = await consume(queue, async (job) => {
        if (job.attempt < 3) throw new RetryableJobError(`attempt ${job.attempt} failed`);
      });
      await queue.enqueue('contract.retry', { n: 4 });
      await waitFor(() => runs.length === 3, 10_000, 'three attempts');
      expect(runs.map((run) => run.job.attempt)).toEqual([1, 2, 3]);
      expect(runs.every((run) => run.job.maxAttempts === 3)).toBe(true);
      expect(runs[1].at - runs[0].at).toBeGreaterThanOrEqual(90);
      expect(runs[2].at - runs[1].at).toBeGreaterThanOrEqual(190);
    });

    it('takes attempts and backoff from the enqueue options over the defaults', async () => {
      const queue = await queueOn({ attempts: 1, backoffMs: 10 });
      const runs = await consume(queue, async () => {
        throw new Error('always fails');
      });
      await queue.enqueue('contract.ownAttempts', {}, { attempts: 2, backoffMs: 150 });
      await waitFor(() => runs.length === 2, 10_000, 'two attempts');
      expect(runs[1].at - runs[0].at).toBeGreaterThanOrEqual(140);
      expect(runs[1].job.maxAttempts).toBe(2);
      await sleep(400);
      expect(runs).toHaveLength(2);
    });

    it('stops after the last attempt', async () => {
      const queue = await queueOn({ attempts: 2, backoffMs: 20 });
      const runs = await consume(queue, async () => {
        throw new RetryableJobError('still failing');
      });
      await queue.enqueue('contract.exhausted', {});
      await waitFor(() => runs.length === 2, 10_000, 'two attempts');
      await sleep(300);
      expect(runs).toHaveLength(2);
    });

    it('fails a job at once on PermanentJobError', async () => {
      const queue = await queueOn({ attempts: 5, backoffMs: 20 });
      const runs = await consume(queue, async () => {
        throw new PermanentJobError('bad payload');
      });
      await queue.enqueue('contract.permanent', {});
      await waitFor(() => runs.length === 1, 10_000, 'the first attempt');
      await sleep(300);
      expect(runs).toHaveLength(1);
    });

    it('ignores a second enqueue with the same dedupeKey', async () => {
      const queue = await queueOn();
      const key: EnqueueOptions = { dedupeKey: 'trigger:65f0c0ffee0000000000abcd' };
      await queue.enqueue('contract.dedupe', { n: 1 }, key);
      await queue.enqueue('contract.dedupe', { n: 2 }, key);
      await queue.enqueue('contract.dedupe', { n: 3 }, { dedupeKey: 'trigger%3A65f0c0ffee0000000000abcd' });
      const runs = await consume(queue);
      await waitFor(() => runs.length === 2, 10_000, 'the two distinct jobs');
      await sleep(200);
      expect(runs.map((run) => (run.job.payload as { n: number }).n).sort()).toEqual([1, 3]);
    });

    it('concurrent enqueues each store their own job once, with their own name, key and delay', async () => {
      const queue = await queueOn();
      const enqueuedAt = Date.now();
      await Promise.all([
        ...Array.from({ length: 30 }, (_, n) => queue.enqueue(n % 2 ? 'contract.odd' : 'contract.even', { n }, { dedupeKey: `concurrent:${n}` })),
        queue.enqueue('contract.even', { n: 100 }, { dedupeKey: 'concurrent:0' }),
        queue.enqueue('contract.late', { n: 200 }, { delayMs: 400 }),
      ]);
      const runs = await consume(queue);
      await waitFor(() => runs.length === 31, 10_000, 'every distinct job');
      await sleep(200);
      const seen = runs.map((run) => (run.job.payload as { n: number }).n);
      expect(new Set(seen).size).toBe(31);
      expect(seen).not.toContain(100);
      expect(runs.every((run) => run.job.name === ((run.job.payload as { n: number }).n === 200 ? 'contract.late' : (run.job.payload as { n: number }).n % 2 ? 'contract.odd' : 'contract.even'))).toBe(true);
      expect(runs.find((run) => run.job.name === 'contract.late')!.at - enqueuedAt).toBeGreaterThanOrEqual(390);
    });

    it('enqueueMany adds every job of a batch once, skipping keys already queued, and delays those asked to wait', async () => {
      const queue = await queueOn();
      await queue.enqueue('contract.many', { n: 0 }, { dedupeKey: 'many:0' });
      // More than one batch of each implementation (200 rows, 500 jobs), one of them already queued.
      const jobs = Array.from({ length: 620 }, (_, n) => ({ payload: { n }, options: { dedupeKey: `many:${n}` } as EnqueueOptions }));
      jobs.push({ payload: { n: 1000 }, options: { dedupeKey: 'many:1000', delayMs: 400 } });
      const enqueuedAt = Date.now();
      await queue.enqueueMany('contract.many', jobs);
      await queue.enqueueMany('contract.many', jobs.slice(0, 10));
      await queue.enqueueMany('contract.many', []);
      const runs = await consume(queue);
      await waitFor(() => runs.length === 621, 20_000, 'every distinct job');
      await sleep(200);
      const seen = runs.map((run) => (run.job.payload as { n: number }).n);
      expect(new Set(seen).size).toBe(621);
      expect(seen.filter((n) => n === 0)).toHaveLength(1);
      expect(runs.every((run) => run.job.name === 'contract.many')).toBe(true);
      const delayed = runs.find((run) => (run.job.payload as { n: number }).n === 1000)!;
      expect(delayed.at - enqueuedAt).toBeGreaterThanOrEqual(390);
    });

    it('close() waits for running jobs to finish', async () => {
      const queue = await queueOn();
      let finished = false;
      const runs = await consume(queue, async () => {
        await sleep(300);
        finished = true;
      });
      await queue.enqueue('contract.drain', {});
      await waitFor(() => runs.length === 1, 10_000, 'the job to start');
      await queue.close();
      expect(finished).toBe(true);
    });

    it('close({ graceMs }) returns a job still running after the grace to the queue', async () => {
      const first = await queueOn({ attempts: 3, backoffMs: 20 });
      let release: () => void = () => undefined;
      const blocked = new Promise<void>((resolve) => (release = resolve));
      const firstRuns = await consume(first, () => blocked);
      await first.enqueue('contract.returned', { n: 5 });
      await waitFor(() => firstRuns.length === 1, 10_000, 'the job to start');
      const closeStartedAt = Date.now();
      await first.close({ graceMs: 150 });
      expect(Date.now() - closeStartedAt).toBeLessThan(5000);

      const second = await queueOn({ attempts: 3, backoffMs: 20 });
      const secondRuns = await consume(second);
      await waitFor(() => secondRuns.length === 1, 15_000, 'the returned job to run again');
      expect(secondRuns[0].job.payload).toEqual({ n: 5 });
      release();
    });

    it('ping() resolves while the backend is reachable', async () => {
      const queue = await queueOn();
      await expect(queue.ping()).resolves.toBeUndefined();
    });
  });
}

/** The SQL queue's own guarantee: a job its process left running (crash) returns once the lease lapses. */
for (const [name, available, open] of [
  ['SQLite', true, openTestSqlite],
  ['PostgreSQL', await servicesAvailable(['PostgreSQL']), openTestPostgres],
] as const) {
  describe.skipIf(!available)(`SqlQueue lease on ${name}`, () => {
    let database: TestSqlDatabase | undefined;
    let queue: SqlQueue | undefined;
    afterEach(async () => {
      await queue?.close({ graceMs: 100 });
      await database?.close();
    });

    it('runs again a job whose process died while running it, as its next attempt', async () => {
      database = await open();
      const crashedAt = new Date(Date.now() - 60_000).toISOString();
      // The row a crashed process leaves: claimed (attempts 1), lease expired, never finished.
      await database.db
        .insertInto('queue_jobs')
        .values({
          id: '65f0c0ffee0000000000abcd',
          name: 'contract.crashed',
          payload: JSON.stringify({ n: 7 }),
          run_at: crashedAt,
          attempts: 1,
          max_attempts: 3,
          state: 'active',
          locked_until: new Date(Date.now() - 1000).toISOString(),
          last_error: null,
          dedupe_key: null,
          created_at: crashedAt,
          updated_at: crashedAt,
        })
        .execute();
      queue = new SqlQueue(database.db, { dialect: database.dialect, clock: systemClock, logger: silentLogger, pollIntervalMs: 20, defaultAttempts: 3, backoffMs: 20 });
      const runs: QueuedJob[] = [];
      await queue.start(async (job) => void runs.push(job), { concurrency: 1 });
      await waitFor(() => runs.length === 1, 10_000, 'the abandoned job to run');
      expect(runs[0]).toMatchObject({ id: '65f0c0ffee0000000000abcd', payload: { n: 7 }, attempt: 2, maxAttempts: 3 });
    });

    it('does not take a job whose lease is still live', async () => {
      database = await open();
      const now = new Date().toISOString();
      await database.db
        .insertInto('queue_jobs')
        .values({
          id: '65f0c0ffee0000000000abce',
          name: 'contract.leased',
          payload: '{}',
          run_at: now,
          attempts: 1,
          max_attempts: 3,
          state: 'active',
          locked_until: new Date(Date.now() + 60_000).toISOString(),
          last_error: null,
          dedupe_key: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      queue = new SqlQueue(database.db, { dialect: database.dialect, clock: systemClock, logger: silentLogger, pollIntervalMs: 20, defaultAttempts: 3, backoffMs: 20 });
      const runs: QueuedJob[] = [];
      await queue.start(async (job) => void runs.push(job), { concurrency: 1 });
      await queue.enqueue('contract.marker', {});
      await waitFor(() => runs.length === 1, 10_000, 'the marker job');
      await sleep(200);
      expect(runs.map((job) => job.name)).toEqual(['contract.marker']);
    });
  });
}
