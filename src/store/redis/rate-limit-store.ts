import type { Redis } from 'ioredis';
import type { RateLimitStore } from '../ports.js';
import { guarded } from './connection.js';

/**
 * INCR and EXPIRE in one script: one command per request (EVALSHA) where MULTI, INCR, EXPIRE, EXEC were four, on the
 * trigger's hot path. A script runs atomically, as the MULTI did.
 */
const HIT = `local count = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return count`;

type WithHit = Redis & { heraldRateLimitHit(key: string, ttlSeconds: number): Promise<number> };

/** Fixed-window counters in Redis, shared by every API process. */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: WithHit;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    // ioredis sends a defined command as EVALSHA, and loads the script by EVAL when Redis does not know it.
    if (typeof (redis as unknown as Partial<WithHit>).heraldRateLimitHit !== 'function') redis.defineCommand('heraldRateLimitHit', { numberOfKeys: 1, lua: HIT });
    this.redis = redis as WithHit;
  }

  async hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number> {
    const key = `${this.prefix}:rl:${environmentId}:${category}:${windowStart}`;
    // The counter outlives its window by one window so a slow clock never sees it vanish early.
    return guarded(this.redis, async () => Number(await this.redis.heraldRateLimitHit(key, windowSeconds * 2)));
  }
}
