import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PermanentJobError, type QueuedJob } from '../../src/queue/ports.js';
import { SqlQueue } from '../../src/queue/sql-queue.js';
import { migrateToLatest } from '../../src/store/sql/migrate.js';
import type { Database } from '../../src/store/sql/schema.js';
import { openSqlite } from '../../src/store/sqlite/connection.js';
import { ManualClock } from '../helpers/test-server.js';

const silent = { info() {}, warn() {}, error() {}, debug() {}, child() { return silent; } };
let dir: string;
let db: Kysely<Database>;
let clock: ManualClock;
const queues: SqlQueue[] = [];

function makeQueue(options: { leaseMs?: number } = {}): SqlQueue {
  const queue = new SqlQueue(db, { dialect: 'sqlite', clock, logger: silent, pollIntervalMs: 10, defaultAttempts: 3, backoffMs: 1000, ...options });
  queues.push(queue);
  return queue;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function rows() {
  return db.selectFrom('queue_jobs').selectAll().execute();
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'herald-queue-'));
  db = openSqlite(dir);
  await migrateToLatest(db);
  clock = new ManualClock();
});
afterEach(async () => {
  for (const queue of queues.splice(0)) await queue.close({ graceMs: 100 });
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('SqlQueue', () => {
  it('runs an enqueued job at once and deletes it when the handler succeeds', async () => {
    const queue = makeQueue();
    const seen: QueuedJob[] = [];
    await queue.start(async (job) => void seen.push(job), { concurrency: 2 });
    await queue.enqueue('hello', { id: 1 });
    await until(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ name: 'hello', payload: { id: 1 }, attempt: 1, maxAttempts: 3 });
    await until(async () => (await rows()).length === 0);
  });

  it('ignores a second enqueue with the same dedupe key while the first is known', async () => {
    const queue = makeQueue();
    await queue.enqueue('a', { n: 1 }, { dedupeKey: 'k' });
    await queue.enqueue('a', { n: 2 }, { dedupeKey: 'k' });
    const stored = await rows();
    expect(stored).toHaveLength(1);
    expect(JSON.parse(stored[0].payload)).toEqual({ n: 1 });
  });

  it('waits for a delayed job until the clock reaches it', async () => {
    const queue = makeQueue();
    const seen: number[] = [];
    await queue.start(async (job) => void seen.push(job.attempt), { concurrency: 1 });
    await queue.enqueue('later', {}, { delayMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([]);
    clock.advance(60_000);
    queue.wake();
    await until(() => seen.length === 1);
  });

  it('retries with exponential backoff, then keeps the job as failed', async () => {
    const queue = makeQueue();
    const attempts: number[] = [];
    await queue.start(async (job) => {
      attempts.push(job.attempt);
      throw new Error(`boom ${job.attempt}`);
    }, { concurrency: 1 });
    await queue.enqueue('flaky', {});
    await until(() => attempts.length === 1);
    await until(async () => (await rows())[0]?.state === 'waiting');
    expect((await rows())[0].run_at).toBe(new Date(clock.now() + 1000).toISOString());
    clock.advance(1000);
    queue.wake();
    await until(() => attempts.length === 2);
    await until(async () => (await rows())[0]?.state === 'waiting' && (await rows())[0].attempts === 2);
    expect((await rows())[0].run_at).toBe(new Date(clock.now() + 2000).toISOString());
    clock.advance(2000);
    queue.wake();
    await until(async () => (await rows())[0]?.state === 'failed');
    expect(attempts).toEqual([1, 2, 3]);
    expect((await rows())[0].last_error).toBe('boom 3');
  });

  it('fails a job at once on a PermanentJobError', async () => {
    const queue = makeQueue();
    let calls = 0;
    await queue.start(async () => {
      calls++;
      throw new PermanentJobError('no');
    }, { concurrency: 1 });
    await queue.enqueue('bad', {});
    await until(async () => (await rows())[0]?.state === 'failed');
    expect(calls).toBe(1);
  });

  it('gives a job whose lease ran out (its process died) to another consumer', async () => {
    const crashed = makeQueue({ leaseMs: 5000 });
    let started = false;
    await crashed.start(() => {
      started = true;
      return new Promise(() => {});
    }, { concurrency: 1 });
    await crashed.enqueue('stuck', { n: 1 });
    await until(() => started);
    const survivor = makeQueue({ leaseMs: 5000 });
    const seen: QueuedJob[] = [];
    await survivor.start(async (job) => void seen.push(job), { concurrency: 1 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([]);
    clock.advance(5001);
    survivor.wake();
    await until(() => seen.length === 1);
    expect(seen[0]).toMatchObject({ name: 'stuck', attempt: 2 });
  });

  it('close waits for running jobs', async () => {
    const queue = makeQueue();
    let finished = false;
    await queue.start(async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      finished = true;
    }, { concurrency: 1 });
    await queue.enqueue('slow', {});
    await until(async () => (await rows())[0]?.state === 'active');
    await queue.close();
    expect(finished).toBe(true);
  });

  it('starts no job whose claim was still running when close began, and hands its rows back at once', async () => {
    let queue: SqlQueue | undefined;
    let closing: Promise<void> | undefined;
    // close() is called the moment the claim's rows come back from the database, before the queue sees them.
    const closeOnClaim = db.withPlugin({
      transformQuery: (args) => args.node,
      transformResult: async ({ result }) => {
        const claimed = result.rows.length > 0 && result.rows.every((row) => (row as { state?: unknown }).state === 'active');
        if (claimed && queue && !closing) closing = queue.close({ graceMs: 100 });
        return result;
      },
    });
    queue = new SqlQueue(closeOnClaim, { dialect: 'sqlite', clock, logger: silent, pollIntervalMs: 10, defaultAttempts: 3, backoffMs: 1000 });
    queues.push(queue);
    await queue.enqueueMany('late', [{ payload: { n: 1 } }, { payload: { n: 2 } }, { payload: { n: 3 } }]);
    const started: QueuedJob[] = [];
    await queue.start(async (job) => void started.push(job), { concurrency: 4 });
    await until(() => closing !== undefined);
    await closing;
    // Whatever the claim's caller would still do runs in this turn's microtasks and the next turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([]);
    const left = await rows();
    expect(left.map((row) => [row.state, row.attempts, row.locked_until])).toEqual([
      ['waiting', 0, null],
      ['waiting', 0, null],
      ['waiting', 0, null],
    ]);
  });

  it('runs at most the shared concurrency while the API is serving, and all of it again once it stops', async () => {
    const queue = makeQueue();
    let serving = true;
    queue.shareWith(() => serving, 2);
    let running = 0;
    let most = 0;
    const gates: Array<() => void> = [];
    await queue.start(async () => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
    }, { concurrency: 6 });
    for (let i = 0; i < 6; i++) await queue.enqueue('work', { i });
    await until(() => running === 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(most).toBe(2);
    // The burst is over: the next job to end (or the poll) fills every slot.
    serving = false;
    gates.shift()!();
    await until(() => running === 5);
    expect(most).toBe(5);
    while (gates.length > 0) gates.shift()!();
    await until(async () => (await rows()).length === 0);
  });
});
