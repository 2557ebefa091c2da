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

  /** Hits waiting for the round trip in flight (see hit). */
  private readonly waiting: Array<{ key: string; ttlSeconds: number; resolve: (count: number) => void; reject: (error: unknown) => void }> = [];
  private sending = false;

  /**
   * Under load, hits arriving while one is in flight wait for it and then go together in one pipeline (one socket
   * write, one read, each hit its own script call and its own answer); alone a hit goes out at once.
   */
  async hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number> {
    const key = `${this.prefix}:rl:${environmentId}:${category}:${windowStart}`;
    // The counter outlives its window by one window so a slow clock never sees it vanish early.
    return guarded(this.redis, () => {
      const counted = new Promise<number>((resolve, reject) => this.waiting.push({ key, ttlSeconds: windowSeconds * 2, resolve, reject }));
      if (!this.sending) void this.sendWaiting();
      return counted;
    });
  }

  private async sendWaiting(): Promise<void> {
    this.sending = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, HITS_PER_PIPELINE);
        try {
          if (batch.length === 1) {
            batch[0]!.resolve(Number(await this.redis.heraldRateLimitHit(batch[0]!.key, batch[0]!.ttlSeconds)));
            continue;
          }
          const pipeline = this.redis.pipeline() as ReturnType<Redis['pipeline']> & { heraldRateLimitHit(key: string, ttlSeconds: number): unknown };
          for (const waiting of batch) pipeline.heraldRateLimitHit(waiting.key, waiting.ttlSeconds);
          const results = (await pipeline.exec()) ?? [];
          batch.forEach((waiting, index) => {
            const [error, count] = results[index] ?? [new Error('rate-limit pipeline was discarded'), 0];
            if (error) waiting.reject(error);
            else waiting.resolve(Number(count));
          });
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        }
      }
    } finally {
      this.sending = false;
    }
  }
}
