import type { Redis } from 'ioredis';
import type { RateLimitStore } from '../ports.js';
import { guarded } from './connection.js';

/** Fixed-window counters in Redis: INCR and EXPIRE in one MULTI, shared by every API process. */
export class RedisRateLimitStore implements RateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number> {
    const key = `${this.prefix}:rl:${environmentId}:${category}:${windowStart}`;
    return guarded(this.redis, async () => {
      // The counter outlives its window by one window so a slow clock never sees it vanish early.
      const results = await this.redis.multi().incr(key).expire(key, windowSeconds * 2).exec();
      const [incrError, count] = results?.[0] ?? [new Error('rate-limit transaction was discarded'), 0];
      if (incrError) throw incrError;
      return Number(count);
    });
  }
}
