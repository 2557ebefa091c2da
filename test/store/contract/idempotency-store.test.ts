import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdempotencyRecord, IdempotencyStore } from '../../../src/store/ports.js';
import { SqlIdempotencyStore } from '../../../src/store/sql/idempotency-store.js';
import { RedisIdempotencyStore } from '../../../src/store/redis/idempotency-store.js';
import { openTestPostgres, openTestRedis, openTestSqlite, servicesAvailable } from '../../helpers/databases.js';

/** One contract, every implementation: SQL on SQLite, SQL on PostgreSQL, Redis. */
interface Implementation {
  name: string;
  available: boolean;
  open(): Promise<{ store: IdempotencyStore; close(): Promise<void>; other(): IdempotencyStore }>;
}

const implementations: Implementation[] = [
  {
    name: 'SQL on SQLite',
    available: true,
    async open() {
      const database = await openTestSqlite();
      return { store: new SqlIdempotencyStore(database.db), close: database.close, other: () => new SqlIdempotencyStore(database.db) };
    },
  },
  {
    name: 'SQL on PostgreSQL',
    available: await servicesAvailable(['PostgreSQL']),
    async open() {
      const database = await openTestPostgres();
      return { store: new SqlIdempotencyStore(database.db), close: database.close, other: () => new SqlIdempotencyStore(database.db) };
    },
  },
  {
    name: 'Redis',
    available: await servicesAvailable(['Redis']),
    async open() {
      const redis = await openTestRedis();
      return { store: new RedisIdempotencyStore(redis.redis, redis.prefix), close: redis.close, other: () => new RedisIdempotencyStore(redis.redis, redis.prefix) };
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
    /** A store of another process instance (another owner) over the same storage. */
    let other: () => IdempotencyStore;
    beforeAll(async () => {
      ({ store, close, other } = await implementation.open());
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

    const at = (base: number, offsetMs: number) => new Date(base + offsetMs).toISOString();

    it('a live lease holds the key against another process; a lapsed one is taken over with its seed', async () => {
      const base = Date.now();
      const first = record({ leaseExpiresAt: at(base, 1000), seed: 'seed-1' });
      expect(await store.claim(first, at(base, 0))).toEqual({ claimed: true });
      const otherProcess = other();
      const retry = { ...first, leaseExpiresAt: at(base, 1500), seed: 'seed-2' };
      const held = await otherProcess.claim(retry, at(base, 500));
      expect(held.claimed).toBe(false);
      if (!held.claimed) expect(held.existing).toMatchObject({ state: 'in_progress', seed: 'seed-1', leaseExpiresAt: at(base, 1000) });

      const later = { ...first, leaseExpiresAt: at(base, 12_000), seed: 'seed-3' };
      const taken = await otherProcess.claim(later, at(base, 1001));
      expect(taken.claimed).toBe(true);
      if (taken.claimed) expect(taken.resumed).toMatchObject({ seed: 'seed-1', state: 'in_progress' });
      // The dead holder can neither release nor answer for the key any more; the new holder can.
      await store.release(first.environmentId, first.key);
      await store.complete(first.environmentId, first.key, { status: 500, body: 'stale', headers: {} });
      await otherProcess.complete(first.environmentId, first.key, { status: 201, body: '{"ok":true}', headers: {} });
      const replay = await store.claim({ ...first, leaseExpiresAt: at(base, 20_000) }, at(base, 15_000));
      expect(replay.claimed).toBe(false);
      if (!replay.claimed) expect(replay.existing).toMatchObject({ state: 'done', responseStatus: 201, responseBody: '{"ok":true}' });
    });

    it('a renewed lease keeps holding the key', async () => {
      const base = Date.now();
      const first = record({ leaseExpiresAt: at(base, 1000), seed: 's' });
      await store.claim(first, at(base, 0));
      await store.renew([{ environmentId: first.environmentId, key: first.key }], at(base, 5000));
      const retry = await other().claim({ ...first, leaseExpiresAt: at(base, 9000) }, at(base, 2000));
      expect(retry.claimed).toBe(false);
      // Renewal by another owner does not extend someone else's claim.
      await other().renew([{ environmentId: first.environmentId, key: first.key }], at(base, 60_000));
      const taken = await other().claim({ ...first, leaseExpiresAt: at(base, 9000) }, at(base, 5001));
      expect(taken.claimed).toBe(true);
    });

    it('a lapsed claim is not taken over by another request with the same key', async () => {
      const base = Date.now();
      const first = record({ leaseExpiresAt: at(base, 100), seed: 's' });
      await store.claim(first, at(base, 0));
      const result = await other().claim({ ...first, bodyHash: 'another', leaseExpiresAt: at(base, 9000) }, at(base, 5000));
      expect(result.claimed).toBe(false);
    });

    it('exactly one of many concurrent takeovers wins', async () => {
      const base = Date.now();
      const first = record({ leaseExpiresAt: at(base, 100), seed: 's' });
      await store.claim(first, at(base, 0));
      const stores = Array.from({ length: 8 }, () => other());
      const results = await Promise.all(stores.map((s) => s.claim({ ...first, leaseExpiresAt: at(base, 9000) }, at(base, 5000))));
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
    });
  });
}
