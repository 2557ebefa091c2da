import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { migrateToLatest, migratorFor } from '../../../src/store/sql/migrate.js';
import { migrationProvider } from '../../../src/store/sql/migrations.js';
import type { TestSqlDatabase } from '../../helpers/databases.js';
import { eventRow, eventTime, unmigratedImplementations } from '../../helpers/migration-events.js';

/**
 * Events stored before the per-second counts existed (0026 on PostgreSQL, 0027 on SQLite) are counted by the
 * migration, and the counts then follow later writes.
 */
const implementations = unmigratedImplementations;

const at = eventTime;

const event = eventRow;

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`notification_buckets backfill on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    const env = newId();
    const other = newId();

    async function counts(): Promise<string[]> {
      const rows = await database.db
        .selectFrom('notification_buckets')
        .select(['environment_id', 'bucket', sql<number>`sum(n)`.as('n')])
        .groupBy(['environment_id', 'bucket'])
        .execute();
      return rows.map((row) => `${row.environment_id === env ? 'env' : 'other'} ${row.bucket} ${Number(row.n)}`).sort();
    }

    beforeAll(async () => {
      database = await implementation.open();
      const before0026 = { getMigrations: async () => Object.fromEntries(Object.entries(await migrationProvider.getMigrations()).filter(([name]) => name < '0026')) };
      const { error } = await (await migratorFor(database.db, database.dialect, before0026)).migrateToLatest();
      if (error) throw error;
      await database.db
        .insertInto('notifications')
        .values([event(env, at(1, 0)), event(env, at(1, 999)), event(env, at(2, 500)), event(other, at(1, 10))])
        .execute();
      await migrateToLatest(database.db, database.dialect);
    });
    afterAll(async () => database?.close());

    it('counts the events already stored, per environment and second', async () => {
      expect(await counts()).toEqual([`env ${at(1, 0).slice(0, 19)} 2`, `env ${at(2, 0).slice(0, 19)} 1`, `other ${at(1, 0).slice(0, 19)} 1`]);
    });

    it('then follows inserts and deletes', async () => {
      await database.db.insertInto('notifications').values(event(env, at(2, 1))).execute();
      await database.db.deleteFrom('notifications').where('environment_id', '=', other).execute();
      expect(await counts()).toEqual([`env ${at(1, 0).slice(0, 19)} 2`, `env ${at(2, 0).slice(0, 19)} 2`]);
    });
  });
}
