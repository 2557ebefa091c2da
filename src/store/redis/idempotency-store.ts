import type { Redis } from 'ioredis';
import type { IdempotencyRecord, IdempotencyStore } from '../ports.js';
import { guarded } from './connection.js';

/**
 * Idempotency keys in Redis: one JSON value per (environment, key) whose TTL is the record's
 * expiry, so an expired key is simply absent. `claim` is a single SET NX (atomic across API processes).
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private keyOf(environmentId: string, key: string): string {
    return `${this.prefix}:idem:${environmentId}:${key}`;
  }

  async claim(record: IdempotencyRecord, now: string): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRecord }> {
    const redisKey = this.keyOf(record.environmentId, record.key);
    const ttlMs = Math.max(1, Date.parse(record.expiresAt) - Date.parse(now));
    return guarded(this.redis, async () => {
      // A holder can expire between the failed SET and the GET: then claim again (bounded).
      for (let round = 0; round < 3; round++) {
        const set = await this.redis.set(redisKey, JSON.stringify({ ...record, state: 'in_progress' }), 'PX', ttlMs, 'NX');
        if (set === 'OK') return { claimed: true as const };
        const existing = await this.redis.get(redisKey);
        if (existing !== null) return { claimed: false as const, existing: toRecord(existing) };
      }
      throw new Error(`idempotency key ${record.key} could not be claimed`);
    });
  }

  async complete(environmentId: string, key: string, response: { status: number; body: string; headers: Record<string, string> }): Promise<void> {
    const redisKey = this.keyOf(environmentId, key);
    await guarded(this.redis, async () => {
      const stored = await this.redis.get(redisKey);
      if (stored === null) return;
      const record: IdempotencyRecord = {
        ...(JSON.parse(stored) as IdempotencyRecord),
        state: 'done',
        responseStatus: response.status,
        responseBody: response.body,
        responseHeaders: response.headers,
      };
      // XX + KEEPTTL: only update the live record, keeping the expiry chosen at claim time.
      await this.redis.set(redisKey, JSON.stringify(record), 'KEEPTTL', 'XX');
    });
  }

  async release(environmentId: string, key: string): Promise<void> {
    await guarded(this.redis, () => this.redis.eval(RELEASE_IN_PROGRESS, 1, this.keyOf(environmentId, key)));
  }
}

/** Deletes the key only while it is still in progress, so a finished answer is never dropped. */
const RELEASE_IN_PROGRESS = `
local value = redis.call('GET', KEYS[1])
if value and cjson.decode(value).state == 'in_progress' then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

function toRecord(json: string): IdempotencyRecord {
  const record = JSON.parse(json) as IdempotencyRecord;
  return { ...record, responseHeaders: record.responseHeaders ?? {} };
}
