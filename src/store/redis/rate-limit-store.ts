import type { Redis } from 'ioredis';
import type { RateLimitStore } from '../ports.js';
import { allFulfilled, CoalescedBatches } from './coalesced-batches.js';
import { guarded } from './connection.js';

/**
 * INCR and EXPIRE in one script: one command per request (EVALSHA) where MULTI, INCR, EXPIRE, EXEC were four, on the
 * trigger's hot path. A script runs atomically, as the MULTI did.
 */
const HIT = `local count = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return count`;

/** Hits per pipeline at most. */
const HITS_PER_PIPELINE = 500;

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

  /**
   * Under load, hits arriving while one is in flight wait for it and then go together in one pipeline (one socket
   * write, one read, each hit its own script call and its own answer); alone a hit goes out at once.
   */
  private readonly hits = new CoalescedBatches<{ key: string; ttlSeconds: number }, number>(async (hits) => {
    if (hits.length === 1) return allFulfilled(1, Number(await this.redis.heraldRateLimitHit(hits[0]!.key, hits[0]!.ttlSeconds)));
    const pipeline = this.redis.pipeline() as ReturnType<Redis['pipeline']> & { heraldRateLimitHit(key: string, ttlSeconds: number): unknown };
    for (const hit of hits) pipeline.heraldRateLimitHit(hit.key, hit.ttlSeconds);
    const results = (await pipeline.exec()) ?? [];
    return hits.map((_, index) => {
      const [error, count] = results[index] ?? [new Error('rate-limit pipeline was discarded'), 0];
      return error ? ({ status: 'rejected', reason: error } as const) : ({ status: 'fulfilled', value: Number(count) } as const);
    });
  }, HITS_PER_PIPELINE);

  async hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number> {
    const key = `${this.prefix}:rl:${environmentId}:${category}:${windowStart}`;
    // The counter outlives its window by one window so a slow clock never sees it vanish early.
    return guarded(this.redis, () => this.hits.run({ key, ttlSeconds: windowSeconds * 2 }));
  }
}
