import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlIdempotencyStore } from '../../src/store/sql/idempotency-store.js';
import type { IdempotencyRecord } from '../../src/store/ports.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../helpers/databases.js';

const postgresAvailable = await servicesAvailable(['PostgreSQL']);

const NOW = '2026-11-22T12:00:00.000Z';
const LATER = '2026-11-23T12:00:00.000Z';

function record(overrides: Partial<IdempotencyRecord> = {}): IdempotencyRecord {
  return {
    environmentId: 'env-a',
    key: 'key-1',
    method: 'POST',
    path: '/v1/things',
    bodyHash: 'hash-1',
    state: 'in_progress',
    expiresAt: LATER,
    ...overrides,
  };
}

/** The IdempotencyStore contract, run against each SQL database. */
function contract(name: string, open: () => Promise<TestSqlDatabase>, enabled: boolean) {
  describe.skipIf(!enabled)(`SqlIdempotencyStore on ${name}`, () => {
    let database: TestSqlDatabase;
    let store: SqlIdempotencyStore;

    beforeAll(async () => {
      database = await open();
      store = new SqlIdempotencyStore(database.db);
    });
    afterAll(async () => database?.close());

    const row = (environmentId: string, key: string) =>
      database.db.selectFrom('idempotency_keys').selectAll().where('environment_id', '=', environmentId).where('key', '=', key).executeTakeFirst();

    it('claims a new key once; a second claim returns the in-progress record', async () => {
      expect(await store.claim(record({ key: 'claim' }), NOW)).toEqual({ claimed: true });
      const second = await store.claim(record({ key: 'claim', bodyHash: 'other' }), NOW);
      expect(second).toEqual({ claimed: false, existing: { ...record({ key: 'claim' }), responseHeaders: {} } });
      expect(await row('env-a', 'claim')).toMatchObject({ state: 'in_progress', body_hash: 'hash-1', created_at: NOW, expires_at: LATER });
    });

    it('gives exactly one winner among concurrent claims', async () => {
      const results = await Promise.all(Array.from({ length: 8 }, () => store.claim(record({ key: 'race' }), NOW)));
      expect(results.filter((result) => result.claimed)).toHaveLength(1);
    });

    it('stores the completed answer and returns it to later claims', async () => {
      await store.claim(record({ key: 'done' }), NOW);
      await store.complete('env-a', 'done', { status: 201, body: '{"data":1}', headers: { 'content-type': 'application/json' } });
      const again = await store.claim(record({ key: 'done' }), NOW);
      expect(again).toEqual({
        claimed: false,
        existing: { ...record({ key: 'done' }), state: 'done', responseStatus: 201, responseBody: '{"data":1}', responseHeaders: { 'content-type': 'application/json' } },
      });
    });

    it('release drops an in-progress claim but never a completed answer', async () => {
      await store.claim(record({ key: 'released' }), NOW);
      await store.release('env-a', 'released');
      expect(await row('env-a', 'released')).toBeUndefined();
      expect(await store.claim(record({ key: 'released' }), NOW)).toEqual({ claimed: true });

      await store.complete('env-a', 'released', { status: 200, body: '{}', headers: {} });
      await store.release('env-a', 'released');
      expect((await row('env-a', 'released'))?.state).toBe('done');
    });

    it('scopes keys by environment', async () => {
      await store.claim(record({ key: 'scoped' }), NOW);
      expect(await store.claim(record({ key: 'scoped', environmentId: 'env-b' }), NOW)).toEqual({ claimed: true });
    });

    it('treats an expired record as absent and purges expired records', async () => {
      await store.claim(record({ key: 'expiring', expiresAt: '2026-11-22T12:00:01.000Z' }), NOW);
      await store.complete('env-a', 'expiring', { status: 201, body: '{}', headers: {} });
      const after = '2026-11-22T12:00:05.000Z';
      expect(await store.claim(record({ key: 'expiring', bodyHash: 'new', expiresAt: LATER }), after)).toEqual({ claimed: true });
      expect(await row('env-a', 'expiring')).toMatchObject({ body_hash: 'new', state: 'in_progress' });

      await store.claim(record({ key: 'stale', expiresAt: '2026-11-22T12:00:01.000Z' }), NOW);
      // The purge runs at most once a minute of the store's clock, on the next claim.
      await store.claim(record({ key: 'trigger-purge', expiresAt: '2026-11-25T00:00:00.000Z' }), '2026-11-24T00:00:00.000Z');
      expect(await row('env-a', 'stale')).toBeUndefined();
      expect(await row('env-a', 'trigger-purge')).toBeDefined();
    });
  });
}

contract('SQLite', openTestSqlite, true);
contract('PostgreSQL', openTestPostgres, postgresAvailable);
