import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdempotencyRecord, IdempotencyStore } from '../../../src/store/ports.js';
import { SqlIdempotencyStore } from '../../../src/store/sql/idempotency-store.js';
import { RedisIdempotencyStore } from '../../../src/store/redis/idempotency-store.js';
import { openTestPostgres, openTestRedis, openTestSqlite, servicesAvailable } from '../../helpers/databases.js';

/** One contract, every implementation: SQL on SQLite, SQL on PostgreSQL, Redis. */
interface Implementation {
  name: string;
  available: boolean;
  open(): Promise<{ store: IdempotencyStore; close(): Promise<void> }>;
}

const implementations: Implementation[] = [
  {
    name: 'SQL on SQLite',
    available: true,
    async open() {
      const database = await openTestSqlite();
      return { store: new SqlIdempotencyStore(database.db), close: database.close };
    },
  },
  {
    name: 'SQL on PostgreSQL',
    available: await servicesAvailable(['PostgreSQL']),
    async open() {
      const database = await openTestPostgres();
      return { store: new SqlIdempotencyStore(database.db), close: database.close };
    },
  },
  {
    name: 'Redis',
    available: await servicesAvailable(['Redis']),
    async open() {
      const redis = await openTestRedis();
      return { store: new RedisIdempotencyStore(redis.redis, redis.prefix), close: redis.close };
    },
  },
];

let keyCounter = 0;
function record(overrides: Partial<IdempotencyRecord> = {}, now = new Date()): IdempotencyRecord {
  return {
    environmentId: 'aaaaaaaaaaaaaaaaaaaaaaa1',
    key: `key-${++keyCounter}-${Math.random().toString(36).slice(2)}`,
    method: 'POST',
    path: '/v1/events/trigger',
    bodyHash: 'hash-1',
    state: 'in_progress',
    expiresAt: new Date(now.getTime() + 60_000).toISOString(),
    ...overrides,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`IdempotencyStore contract: ${implementation.name}`, () => {
    let store: IdempotencyStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await implementation.open());
    });
    afterAll(async () => {
      await close?.();
    });

    it('claims a new key once; a repeat sees the in-progress record', async () => {
      const first = record();
      const now = new Date().toISOString();
      expect(await store.claim(first, now)).toEqual({ claimed: true });
      const repeat = await store.claim({ ...first, bodyHash: 'hash-2' }, now);
      expect(repeat.claimed).toBe(false);
      if (repeat.claimed) return;
      expect(repeat.existing).toMatchObject({
        environmentId: first.environmentId,
        key: first.key,
        method: 'POST',
        path: '/v1/events/trigger',
        bodyHash: 'hash-1',
        state: 'in_progress',
      });
    });

    it('scopes keys by environment', async () => {
      const first = record();
      const now = new Date().toISOString();
      expect(await store.claim(first, now)).toEqual({ claimed: true });
      expect(await store.claim({ ...first, environmentId: 'bbbbbbbbbbbbbbbbbbbbbbb2' }, now)).toEqual({ claimed: true });
    });

    it('stores the completed answer for replays', async () => {
      const first = record();
      const now = new Date().toISOString();
      await store.claim(first, now);
      await store.complete(first.environmentId, first.key, { status: 201, body: '{"data":{"acknowledged":true}}', headers: { 'x-one': '1' } });
      const repeat = await store.claim(first, now);
      expect(repeat.claimed).toBe(false);
      if (repeat.claimed) return;
      expect(repeat.existing).toMatchObject({
        state: 'done',
        responseStatus: 201,
        responseBody: '{"data":{"acknowledged":true}}',
        responseHeaders: { 'x-one': '1' },
        bodyHash: 'hash-1',
      });
    });

    it('release drops an in-progress claim so the key can be claimed again', async () => {
      const first = record();
      const now = new Date().toISOString();
      await store.claim(first, now);
      await store.release(first.environmentId, first.key);
      expect(await store.claim(first, now)).toEqual({ claimed: true });
    });

    it('release leaves a completed answer in place', async () => {
      const first = record();
      const now = new Date().toISOString();
      await store.claim(first, now);
      await store.complete(first.environmentId, first.key, { status: 200, body: '{}', headers: {} });
      await store.release(first.environmentId, first.key);
      const repeat = await store.claim(first, now);
      expect(repeat.claimed).toBe(false);
      if (!repeat.claimed) expect(repeat.existing.state).toBe('done');
    });

    it('treats an expired record as absent', async () => {
      const start = new Date();
      const first = record({ expiresAt: new Date(start.getTime() + 100).toISOString() });
      await store.claim(first, start.toISOString());
      await store.complete(first.environmentId, first.key, { status: 201, body: '{}', headers: {} });
      // Real time passes too: the Redis TTL is wall-clock, the SQL store compares with `now`.
      await sleep(250);
      const later = new Date(start.getTime() + 250);
      const again = record({ key: first.key, expiresAt: new Date(later.getTime() + 60_000).toISOString() });
      expect(await store.claim(again, later.toISOString())).toEqual({ claimed: true });
    });

    it('lets exactly one of many concurrent claims win', async () => {
      const first = record();
      const now = new Date().toISOString();
      const results = await Promise.all(Array.from({ length: 12 }, () => store.claim(first, now)));
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
    });
  });
}
