import { afterAll, describe, expect, it } from 'vitest';
import { RedisRealtimeNotifier } from '../../src/realtime/redis-notifier.js';
import { openRedis } from '../../src/store/redis/connection.js';
import type { Logger } from '../../src/usecases/deps.js';
import { buildMessage, buildSubscriber } from '../helpers/factories.js';

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
      await expect.poll(() => warnings.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
