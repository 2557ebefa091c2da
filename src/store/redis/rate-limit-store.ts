import type { Redis } from 'ioredis';
import type { RateLimitStore } from '../ports.js';
import { allFulfilled, CoalescedBatches } from '../coalesced-batches.js';
import { guarded } from './connection.js';

/**
 * INCRBY and EXPIRE in one script: one command for all the hits of one key in a batch (EVALSHA), where MULTI, INCR,
 * EXPIRE, EXEC were four per hit. A script runs atomically, as the MULTI did: its n hits get the n consecutive counts
 * ending at the total it returns, and no hit of another process falls between them.
 */
const HITS = `local count = redis.call('INCRBY', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[1])
return count`;

/** Hits per batch at most. */
const HITS_PER_BATCH = 500;

type WithHits = Redis & { heraldRateLimitHits(key: string, ttlSeconds: number, hits: number): Promise<number> };
type Hit = { key: string; ttlSeconds: number };

/** Fixed-window counters in Redis, shared by every API process. */
export class RedisRateLimitStore implements RateLimitStore {
  private readonly redis: WithHits;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    // ioredis sends a defined command as EVALSHA, and loads the script by EVAL when Redis does not know it.
    if (typeof (redis as unknown as Partial<WithHits>).heraldRateLimitHits !== 'function') redis.defineCommand('heraldRateLimitHits', { numberOfKeys: 1, lua: HITS });
    this.redis = redis as WithHits;
  }

  /**
   * Under load, hits arriving while one batch is in flight wait for it and then go together: one script call per
   * counter (all the list pages of one environment share one), in one pipeline when the batch holds several counters.
   * Each hit gets its own count, in call order. Alone, a hit goes out at once.
   */
  private readonly hits = new CoalescedBatches<Hit, number>(async (hits) => {
    const byKey = new Map<string, { ttlSeconds: number; indexes: number[] }>();
    hits.forEach((hit, index) => {
      const counter = byKey.get(hit.key);
      if (counter) counter.indexes.push(index);
      else byKey.set(hit.key, { ttlSeconds: hit.ttlSeconds, indexes: [index] });
    });
    const counters = [...byKey];
    if (counters.length === 1) {
      const [key, { ttlSeconds, indexes }] = counters[0]!;
      const total = Number(await this.redis.heraldRateLimitHits(key, ttlSeconds, indexes.length));
      return indexes.map((_, n) => ({ status: 'fulfilled', value: total - indexes.length + 1 + n }));
    }
    const pipeline = this.redis.pipeline() as ReturnType<Redis['pipeline']> & { heraldRateLimitHits(key: string, ttlSeconds: number, hits: number): unknown };
    for (const [key, { ttlSeconds, indexes }] of counters) pipeline.heraldRateLimitHits(key, ttlSeconds, indexes.length);
    const results = (await pipeline.exec()) ?? [];
    const settled: Array<PromiseSettledResult<number>> = allFulfilled(hits.length, 0);
    counters.forEach(([, { indexes }], position) => {
      const [error, total] = results[position] ?? [new Error('rate-limit pipeline was discarded'), 0];
      indexes.forEach((index, n) => {
        settled[index] = error ? { status: 'rejected', reason: error } : { status: 'fulfilled', value: Number(total) - indexes.length + 1 + n };
      });
    });
    return settled;
  }, HITS_PER_BATCH);

  async hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number> {
    const key = `${this.prefix}:rl:${environmentId}:${category}:${windowStart}`;
    // The counter outlives its window by one window so a slow clock never sees it vanish early.
    return guarded(this.redis, () => this.hits.run({ key, ttlSeconds: windowSeconds * 2 }));
  }
}
