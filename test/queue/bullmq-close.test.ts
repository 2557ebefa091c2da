import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BullMqQueue } from '../../src/queue/bullmq-queue.js';
import { openRedis, waitUntilReady } from '../../src/store/redis/connection.js';
import type { Logger } from '../../src/usecases/deps.js';
import { openTestRedis, servicesAvailable, type TestRedis } from '../helpers/databases.js';

const silentLogger: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined, child: () => silentLogger };

/**
 * Closing the BullMQ queue leaves no command of BullMQ's or Herald's unhandled on a connection it disconnects (ioredis
 * rejects a command still waiting there with "Connection is closed."; unhandled, that fails the vitest run and a
 * server's exit). BullMQ awaits or catches its own (the blocked BZPOPMIN is raced and caught, the stalled-job check and
 * lock renewals are caught), and the worker's connection is disconnected only once its worker has closed. These passed
 * before the socket server's fix too: the unhandled "Connection is closed." of session 22 was the socket.io adapter's
 * (test/realtime/socket-server-close.test.ts).
 */
describe.skipIf(!(await servicesAvailable(['Redis'])))('BullMqQueue close', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  beforeAll(() => void process.on('unhandledRejection', onUnhandled));
  afterAll(() => void process.off('unhandledRejection', onUnhandled));
  const messages = () => unhandled.map((reason) => (reason instanceof Error ? `${reason.message} ${reason.stack?.split('\n')[1] ?? ''}` : String(reason)));

  async function open(): Promise<{ redis: TestRedis; queue: BullMqQueue; connection: ReturnType<typeof openRedis> }> {
    const redis = await openTestRedis();
    const connection = openRedis(redis.url, 'command');
    await waitUntilReady(connection);
    const queue = new BullMqQueue({ redisUrl: redis.url, prefix: redis.prefix, logger: silentLogger, defaultAttempts: 1, backoffMs: 10, connection });
    return { redis, queue, connection };
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

  it('while its worker waits for jobs (BZPOPMIN)', async () => {
    unhandled.length = 0;
    const { redis, queue, connection } = await open();
    await queue.start(async () => undefined, { concurrency: 32 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await queue.close();
    connection.disconnect();
    await redis.close();
    await settle();
    expect(messages()).toEqual([]);
  });

  it('while jobs run and adds are in flight', async () => {
    unhandled.length = 0;
    const { redis, queue, connection } = await open();
    let ran = 0;
    await queue.start(async () => {
      ran++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }, { concurrency: 32 });
    await Promise.all(Array.from({ length: 200 }, (_, n) => queue.enqueue('job', { n })));
    const late = Array.from({ length: 50 }, (_, n) => queue.enqueue('late', { n }).catch(() => undefined));
    await expect.poll(() => ran, { timeout: 10_000 }).toBeGreaterThan(10);
    await queue.close();
    await Promise.all(late);
    connection.disconnect();
    await redis.close();
    await settle();
    expect(messages()).toEqual([]);
  });

  it('out of grace while jobs still run', async () => {
    unhandled.length = 0;
    const { redis, queue, connection } = await open();
    let started = 0;
    await queue.start(async () => {
      started++;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }, { concurrency: 8 });
    await Promise.all(Array.from({ length: 20 }, (_, n) => queue.enqueue('job', { n })));
    await expect.poll(() => started, { timeout: 10_000 }).toBeGreaterThan(0);
    await queue.close({ graceMs: 10 });
    connection.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 600));
    await redis.close();
    await settle();
    expect(messages()).toEqual([]);
  });
});
