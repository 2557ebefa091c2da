import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlRateLimitStore } from '../../src/store/sql/rate-limit-store.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../helpers/databases.js';

const postgresAvailable = await servicesAvailable(['PostgreSQL']);

/** The RateLimitStore contract, run against each SQL database. */
function contract(name: string, open: () => Promise<TestSqlDatabase>, enabled: boolean) {
  describe.skipIf(!enabled)(`SqlRateLimitStore on ${name}`, () => {
    let database: TestSqlDatabase;
    let store: SqlRateLimitStore;

    beforeAll(async () => {
      database = await open();
      store = new SqlRateLimitStore(database.db, database.dialect);
    });
    afterAll(async () => database?.close());

    const windowsOf = async (environmentId: string) =>
      (await database.db.selectFrom('rate_limit_counters').selectAll().where('environment_id', '=', environmentId).orderBy('window_start').orderBy('category').execute()).map(
        (row) => ({ category: row.category, windowStart: row.window_start, count: Number(row.count) }),
      );

    it('counts hits per environment, category and window', async () => {
      const w = '2026-11-22T12:00:00.000Z';
      expect(await store.hit('env-a', 'trigger', w, 1)).toBe(1);
      expect(await store.hit('env-a', 'trigger', w, 1)).toBe(2);
      expect(await store.hit('env-a', 'global', w, 1)).toBe(1);
      expect(await store.hit('env-b', 'trigger', w, 1)).toBe(1);
      expect(await store.hit('env-a', 'trigger', '2026-11-22T12:00:01.000Z', 1)).toBe(1);
      expect(await windowsOf('env-a')).toEqual([
        { category: 'global', windowStart: w, count: 1 },
        { category: 'trigger', windowStart: w, count: 2 },
        { category: 'trigger', windowStart: '2026-11-22T12:00:01.000Z', count: 1 },
      ]);
    });

    it('never loses a hit under concurrency', async () => {
      const w = '2026-11-22T13:00:00.000Z';
      const counts = await Promise.all(Array.from({ length: 20 }, () => store.hit('env-c', 'global', w, 1)));
      expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });

    it('prunes windows older than the previous one, at most once a minute', async () => {
      await store.hit('env-d', 'global', '2026-11-23T00:00:00.000Z', 1);
      await store.hit('env-d', 'global', '2026-11-23T00:00:01.000Z', 1);
      // Five minutes later: the next hit prunes everything before the previous window.
      await store.hit('env-d', 'global', '2026-11-23T00:05:00.000Z', 1);
      expect((await windowsOf('env-d')).map((row) => row.windowStart)).toEqual(['2026-11-23T00:05:00.000Z']);
      expect(await windowsOf('env-a')).toEqual([]);
    });
  });
}

contract('SQLite', openTestSqlite, true);
contract('PostgreSQL', openTestPostgres, postgresAvailable);
