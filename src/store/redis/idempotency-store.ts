import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { IdempotencyRecord, IdempotencyStore } from '../ports.js';
import { guarded } from './connection.js';

/**
 * Idempotency keys in Redis: one JSON value per (environment, key) whose TTL is the record's
 * expiry, so an expired key is simply absent. `claim` is one Lua script (atomic across API processes): set the key
 * when absent, take over a lapsed claim of the same request, or return the record that holds it.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  /** `owner`: this process instance; every store in a process shares one (the container makes it). */
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly owner: string = randomUUID(),
  ) {}

  private keyOf(environmentId: string, key: string): string {
    return `${this.prefix}:idem:${environmentId}:${key}`;
  }

  async claim(record: IdempotencyRecord, now: string): Promise<{ claimed: true; resumed?: IdempotencyRecord } | { claimed: false; existing: IdempotencyRecord }> {
    const redisKey = this.keyOf(record.environmentId, record.key);
    const ttlMs = Math.max(1, Date.parse(record.expiresAt) - Date.parse(now));
    const fresh = JSON.stringify({ ...record, state: 'in_progress', owner: this.owner });
    const [outcome, stored] = (await guarded(this.redis, () =>
      this.redis.eval(CLAIM, 1, redisKey, fresh, String(ttlMs), now, record.method, record.path, record.bodyHash, this.owner, record.leaseExpiresAt ?? ''),
    )) as [number, string | null];
    if (outcome === 1) return { claimed: true };
    if (outcome === 2) return { claimed: true, resumed: toRecord(stored!) };
    return { claimed: false, existing: toRecord(stored!) };
  }

  async renew(claims: Array<{ environmentId: string; key: string }>, leaseExpiresAt: string): Promise<void> {
    if (claims.length === 0) return;
    await guarded(this.redis, async () => {
      const pipeline = this.redis.pipeline();
      for (const claim of claims) pipeline.eval(RENEW, 1, this.keyOf(claim.environmentId, claim.key), this.owner, leaseExpiresAt);
      await pipeline.exec();
    });
  }

  async complete(environmentId: string, key: string, response: { status: number; body: string; headers: Record<string, string> }): Promise<void> {
    const redisKey = this.keyOf(environmentId, key);
    await guarded(this.redis, () => this.redis.eval(COMPLETE, 1, redisKey, this.owner, String(response.status), response.body, JSON.stringify(response.headers)));
  }

  async release(environmentId: string, key: string): Promise<void> {
    await guarded(this.redis, () => this.redis.eval(RELEASE_IN_PROGRESS, 1, this.keyOf(environmentId, key), this.owner));
  }
}

/**
 * 1 = claimed fresh, 2 = a lapsed claim of the same request taken over (returns the record as it was), 0 = held.
 * Lapsed: in progress and either without an owner (before leases) or with a lease that has passed (ISO strings
 * compare in time order). ARGV: fresh record, ttl ms, now, method, path, body hash, owner, lease.
 */
const CLAIM = `
local value = redis.call('GET', KEYS[1])
if not value then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, false}
end
local record = cjson.decode(value)
local lease = record.leaseExpiresAt
local lapsed = record.owner == nil or (type(lease) == 'string' and lease <= ARGV[3])
if record.state == 'in_progress' and lapsed and record.method == ARGV[4] and record.path == ARGV[5] and record.bodyHash == ARGV[6] then
  record.owner = ARGV[7]
  if ARGV[8] == '' then record.leaseExpiresAt = nil else record.leaseExpiresAt = ARGV[8] end
  redis.call('SET', KEYS[1], cjson.encode(record), 'KEEPTTL')
  return {2, value}
end
return {0, value}
`;

const RENEW = `
local value = redis.call('GET', KEYS[1])
if not value then return 0 end
local record = cjson.decode(value)
if record.state ~= 'in_progress' or record.owner ~= ARGV[1] then return 0 end
record.leaseExpiresAt = ARGV[2]
redis.call('SET', KEYS[1], cjson.encode(record), 'KEEPTTL')
return 1
`;

/** Only the owner's live claim: a claim taken over by another process is that process's to answer. */
const COMPLETE = `
local value = redis.call('GET', KEYS[1])
if not value then return 0 end
local record = cjson.decode(value)
if record.state ~= 'in_progress' or record.owner ~= ARGV[1] then return 0 end
record.state = 'done'
record.responseStatus = tonumber(ARGV[2])
record.responseBody = ARGV[3]
record.responseHeaders = cjson.decode(ARGV[4])
record.leaseExpiresAt = nil
redis.call('SET', KEYS[1], cjson.encode(record), 'KEEPTTL')
return 1
`;

/** Deletes the key only while it is still this owner's claim in progress, so a finished answer is never dropped. */
const RELEASE_IN_PROGRESS = `
local value = redis.call('GET', KEYS[1])
if not value then return 0 end
local record = cjson.decode(value)
if record.state == 'in_progress' and record.owner == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

function toRecord(json: string): IdempotencyRecord {
  // The owner is this store's business (who may renew, answer or release), not the record's.
  const { owner: _owner, ...record } = JSON.parse(json) as IdempotencyRecord & { owner?: string };
  return { ...record, responseHeaders: record.responseHeaders ?? {} };
}
