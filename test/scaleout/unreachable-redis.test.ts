import { afterAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/domain/errors.js';
import { BullMqQueue } from '../../src/queue/bullmq-queue.js';
import { openRedis } from '../../src/store/redis/connection.js';
import { RedisIdempotencyStore } from '../../src/store/redis/idempotency-store.js';
import { RedisRateLimitStore } from '../../src/store/redis/rate-limit-store.js';
import type { Logger } from '../../src/usecases/deps.js';

/**
 * With Redis down, the API side must fail fast with UnavailableError (the error handler's 503 +
 * Retry-After), never hang. Port 1 on loopback refuses connections, like a stopped Redis.
 */
const DOWN_URL = 'redis://127.0.0.1:1/0';
const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {}, child: () => silentLogger };

describe('Redis unreachable on the API side', () => {
  const redis = openRedis(DOWN_URL, 'command');
  const queue = new BullMqQueue({ redisUrl: DOWN_URL, prefix: 'herald_down', logger: silentLogger, defaultAttempts: 1, backoffMs: 10, connection: redis });
  afterAll(async () => {
    await queue.close();
    redis.disconnect();
  });

  async function failsFast(operation: () => Promise<unknown>): Promise<void> {
    const startedAt = Date.now();
    await expect(operation()).rejects.toBeInstanceOf(UnavailableError);
    expect(Date.now() - startedAt).toBeLessThan(8000);
  }

  it('rate-limit hits fail fast with UnavailableError', async () => {
    await failsFast(() => new RedisRateLimitStore(redis, 'herald_down').hit('e', 'trigger', new Date().toISOString(), 1));
  });

  it('idempotency claims fail fast with UnavailableError', async () => {
    const now = new Date();
    const record = {
      environmentId: 'e', key: 'k', method: 'POST', path: '/v1/events/trigger', bodyHash: 'h',
      state: 'in_progress' as const, expiresAt: new Date(now.getTime() + 60_000).toISOString(),
    };
    await failsFast(() => new RedisIdempotencyStore(redis, 'herald_down').claim(record, now.toISOString()));
  });

  it('enqueue and ping fail fast with UnavailableError', async () => {
    await failsFast(() => queue.enqueue('contract.down', {}));
    await failsFast(() => queue.ping());
  });
});
