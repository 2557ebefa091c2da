import { describe, expect, it } from 'vitest';
import { BullMqQueue } from '../../src/queue/bullmq-queue.js';
import { openRedis, waitUntilReady } from '../../src/store/redis/connection.js';
import type { Logger } from '../../src/usecases/deps.js';
import { openTestRedis, servicesAvailable } from '../helpers/databases.js';

const silentLogger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined, child: () => silentLogger };

describe.skipIf(!(await servicesAvailable(['Redis'])))('BullMqQueue enqueue', () => {
  it('adds concurrent enqueues together: fewer round trips than jobs, each caller answered once its job is stored', async () => {
    const redis = await openTestRedis();
    const connection = openRedis(redis.url, 'command');
    await waitUntilReady(connection);
    const queue = new BullMqQueue({ redisUrl: redis.url, prefix: redis.prefix, logger: silentLogger, defaultAttempts: 1, backoffMs: 10, connection });
    try {
      await queue.enqueue('warm', {}); // loads BullMQ's scripts
      let pipelines = 0;
      let alone = 0;
      const original = { pipeline: connection.pipeline.bind(connection), sendCommand: connection.sendCommand.bind(connection) };
      connection.pipeline = ((...args: unknown[]) => {
        pipelines += 1;
        return (original.pipeline as (...a: unknown[]) => unknown)(...args);
      }) as typeof connection.pipeline;
      connection.sendCommand = ((command: { name: string; pipelineIndex?: number }, ...rest: unknown[]) => {
        if (command.name === 'evalsha' && command.pipelineIndex === undefined) alone += 1;
        return (original.sendCommand as (...a: unknown[]) => unknown)(command, ...rest);
      }) as typeof connection.sendCommand;
      const pending = Array.from({ length: 40 }, (_, n) => queue.enqueue('bulk', { n }, { dedupeKey: `bulk:${n}` }).then(async () => {
        // Answered only once its own job is in Redis.
        expect(await connection.exists(`${redis.prefix}:jobs:k_bulk%3A${n}`)).toBe(1);
      }));
      await Promise.all(pending);
      connection.pipeline = original.pipeline;
      connection.sendCommand = original.sendCommand;
      expect(await queue.pendingCount()).toBe(41);
      // The first add goes out alone at once; the 39 arriving meanwhile go together in one pipeline.
      expect(alone).toBe(1);
      expect(pipelines).toBe(1);
    } finally {
      await queue.close();
      connection.disconnect();
      await redis.close();
    }
  });

  it('fails every caller of a batch whose add failed, and the next enqueue goes out again', async () => {
    const redis = await openTestRedis();
    const connection = openRedis(redis.url, 'command');
    await waitUntilReady(connection);
    const queue = new BullMqQueue({ redisUrl: redis.url, prefix: redis.prefix, logger: silentLogger, defaultAttempts: 1, backoffMs: 10, connection });
    try {
      await queue.enqueue('warm', {});
      const original = connection.pipeline.bind(connection);
      connection.pipeline = (() => {
        throw new Error('injected pipeline failure');
      }) as unknown as typeof connection.pipeline;
      const results = await Promise.allSettled(Array.from({ length: 5 }, (_, n) => queue.enqueue('failing', { n })));
      connection.pipeline = original;
      // The first went alone (no MULTI) and was stored; the four that waited for it failed together.
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected', 'rejected']);
      await queue.enqueue('after', {});
      expect(await queue.pendingCount()).toBe(3);
    } finally {
      await queue.close();
      connection.disconnect();
      await redis.close();
    }
  });
});

describe.skipIf(!(await servicesAvailable(['Redis'])))('BullMqQueue setConcurrency', () => {
  it('lowers and raises the jobs run at once while the worker consumes: running jobs go on, new ones wait', async () => {
    const redis = await openTestRedis();
    const queue = new BullMqQueue({ redisUrl: redis.url, prefix: redis.prefix, logger: silentLogger, defaultAttempts: 1, backoffMs: 10 });
    const release = new Map<number, () => void>();
    const started: number[] = [];
    let running = 0;
    let onStart: (() => void) | undefined;
    const untilRunning = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (started.length >= count ? resolve() : (onStart = check));
        check();
      });
    try {
      await queue.start(async (job) => {
        const { n } = job.payload as { n: number };
        running += 1;
        started.push(n);
        onStart?.();
        await new Promise<void>((resolve) => release.set(n, resolve));
        running -= 1;
      }, { concurrency: 4 });
      for (let n = 0; n < 8; n++) await queue.enqueue('job', { n });
      await untilRunning(4);
      expect(running).toBe(4);
      queue.setConcurrency(1);
      // The four running go on to their end; none starts meanwhile, and then one at a time.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(started).toHaveLength(4);
      for (const n of started) release.get(n)!();
      await untilRunning(5);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(running).toBe(1);
      expect(started).toHaveLength(5);
      queue.setConcurrency(3);
      release.get(started[4]!)!();
      await untilRunning(8);
      expect(running).toBe(3);
      for (const n of started.slice(5)) release.get(n)!();
    } finally {
      for (const resolve of release.values()) resolve();
      await queue.close();
      await redis.close();
    }
  });
});
