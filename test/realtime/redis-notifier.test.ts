import { afterAll, describe, expect, it } from 'vitest';
import { RedisRealtimeNotifier } from '../../src/realtime/redis-notifier.js';
import { openRedis } from '../../src/store/redis/connection.js';
import type { Logger } from '../../src/usecases/deps.js';
import { buildMessage, buildSubscriber } from '../helpers/factories.js';
import { openTestRedis, servicesAvailable } from '../helpers/databases.js';

/**
 * Realtime is fire and forget: with Redis unreachable (port 1 refuses connections) the notifier neither throws into
 * the write that called it nor leaves an unhandled rejection behind; it logs.
 */
describe('the Redis notifier with Redis down', () => {
  const redis = openRedis('redis://127.0.0.1:1/0', 'command');
  afterAll(() => redis.disconnect());

  it('drops the event, logs, and throws nothing', async () => {
    const warnings: unknown[] = [];
    const logger: Logger = { info() {}, warn: (entry) => void warnings.push(entry), error() {}, debug() {}, child: () => logger };
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const notifier = new RedisRealtimeNotifier(redis, 'herald_down:socket.io', logger);
      const subscriber = buildSubscriber({ environmentId: 'e', organizationId: 'o' });
      expect(() => notifier.messageDelivered({ environmentId: 'e', subscriberRecordId: subscriber._id }, buildMessage(subscriber))).not.toThrow();
      expect(() => notifier.messagesChanged({ environmentId: 'e', subscriberRecordId: subscriber._id })).not.toThrow();
      await expect.poll(() => warnings.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe.skipIf(!(await servicesAvailable(['Redis'])))('the Redis notifier with Redis up', () => {
  it("publishes a delivery as one PUBLISH to the subscriber's room and nothing on the request channel; events of one turn as one command (no pipeline)", async () => {
    const redis = await openTestRedis();
    const listener = openRedis(redis.url, 'worker');
    try {
      const logger: Logger = { info() {}, warn() {}, error() {}, debug() {}, child: () => logger };
      const key = `${redis.prefix}:socket.io`;
      const received: string[] = [];
      const payloads: Buffer[] = [];
      listener.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, payload: Buffer) => (received.push(channel.toString()), payloads.push(payload)));
      await listener.psubscribe(`${key}*`);
      let pipelines = 0;
      let alone = 0;
      let many = 0;
      const original = { pipeline: redis.redis.pipeline.bind(redis.redis), publish: redis.redis.publish.bind(redis.redis) };
      redis.redis.pipeline = ((...args: unknown[]) => (pipelines++, (original.pipeline as (...a: unknown[]) => unknown)(...args))) as typeof redis.redis.pipeline;
      redis.redis.publish = ((...args: unknown[]) => (alone++, (original.publish as (...a: unknown[]) => unknown)(...args))) as typeof redis.redis.publish;
      const notifier = new RedisRealtimeNotifier(redis.redis, key, logger);
      const commands = redis.redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const publishMany = commands.heraldPublishMany!.bind(redis.redis);
      commands.heraldPublishMany = (...args: unknown[]) => (many++, publishMany(...args));
      const subscriber = buildSubscriber({ environmentId: 'e', organizationId: 'o' });
      const message = buildMessage(subscriber);
      notifier.messageDelivered({ environmentId: 'e', subscriberRecordId: subscriber._id }, message);
      await expect.poll(() => received.length, { timeout: 5_000 }).toBe(1);
      // The counts follow from the room's packet in the API process holding the subscriber's sockets (session 23):
      // no server-side event, which every API process would receive and decode.
      expect(received[0]).toContain(`#/#inbox:e:${subscriber._id}#`);
      // The emitter's binary (MessagePack) packets arrive whole: the message's id is in the room's.
      expect(payloads[0]!.includes(message._id)).toBe(true);
      expect({ pipelines, alone, many }).toEqual({ pipelines: 0, alone: 1, many: 0 });
      // Any other counts change is a server-side event on the request channel.
      notifier.messagesChanged({ environmentId: 'e', subscriberRecordId: subscriber._id });
      await expect.poll(() => received.length, { timeout: 5_000 }).toBe(2);
      expect(received[1]).toContain('socket.io-request');
      expect(payloads[1]!.includes(subscriber._id)).toBe(true);
      expect({ pipelines, alone, many }).toEqual({ pipelines: 0, alone: 2, many: 0 });
      // Events of the same turn go out in order, as one command.
      const others = [0, 1].map(() => buildSubscriber({ environmentId: 'e', organizationId: 'o' }));
      for (const other of others) notifier.messageDelivered({ environmentId: 'e', subscriberRecordId: other._id }, buildMessage(other));
      notifier.messagesChanged({ environmentId: 'e', subscriberRecordId: subscriber._id });
      await expect.poll(() => received.length, { timeout: 5_000 }).toBe(5);
      expect(received.slice(2)).toEqual([
        expect.stringContaining(`#/#inbox:e:${others[0]!._id}#`),
        expect.stringContaining(`#/#inbox:e:${others[1]!._id}#`),
        expect.stringContaining('socket.io-request'),
      ]);
      expect({ pipelines, alone, many }).toEqual({ pipelines: 0, alone: 2, many: 1 });
    } finally {
      listener.disconnect();
      await redis.close();
    }
  });

  it('sends the events published while a command is in flight together after it, in order (session 18)', async () => {
    const redis = await openTestRedis();
    const listener = openRedis(redis.url, 'worker');
    try {
      const logger: Logger = { info() {}, warn() {}, error() {}, debug() {}, child: () => logger };
      const key = `${redis.prefix}:socket.io`;
      const received: string[] = [];
      listener.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer) => received.push(channel.toString()));
      await listener.psubscribe(`${key}*`);
      let alone = 0;
      let many = 0;
      // The first command is held in flight until the three deliveries below are made (it was held for a fixed 200 ms,
      // which three 10 ms turns could outlast on a loaded machine, and the last delivery then went out alone).
      let releaseFirst!: () => void;
      const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
      const publish = redis.redis.publish.bind(redis.redis);
      redis.redis.publish = ((channel: string, message: string) => (alone++, firstHeld.then(() => publish(channel, message)))) as typeof redis.redis.publish;
      const notifier = new RedisRealtimeNotifier(redis.redis, key, logger);
      const commands = redis.redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const publishMany = commands.heraldPublishMany!.bind(redis.redis);
      commands.heraldPublishMany = (...args: unknown[]) => (many++, publishMany(...args));
      const subscribers = [0, 1, 2, 3].map(() => buildSubscriber({ environmentId: 'e', organizationId: 'o' }));
      notifier.messagesChanged({ environmentId: 'e', subscriberRecordId: subscribers[0]!._id });
      // Three deliveries in three later turns of the event loop, while the first command is in flight.
      for (const subscriber of subscribers.slice(1)) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        notifier.messageDelivered({ environmentId: 'e', subscriberRecordId: subscriber._id }, buildMessage(subscriber));
      }
      releaseFirst();
      await expect.poll(() => received.length, { timeout: 5_000 }).toBe(4);
      expect({ alone, many }).toEqual({ alone: 1, many: 1 });
      expect(received.filter((channel) => channel.includes('inbox:e:'))).toEqual(subscribers.slice(1).map((subscriber) => expect.stringContaining(`inbox:e:${subscriber._id}`)));
    } finally {
      listener.disconnect();
      await redis.close();
    }
  });
});
