import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { migrateToLatest, migratorFor } from '../../../src/store/sql/migrate.js';
import { migrationProvider } from '../../../src/store/sql/migrations.js';
import type { TestSqlDatabase } from '../../helpers/databases.js';
import { eventRow, eventTime, unmigratedImplementations } from '../../helpers/migration-events.js';

/**
 * Events stored before the per-tenth counts existed (0033, SQLite) are counted by the migration, and the counts then
 * follow later inserts, deletes and moves. PostgreSQL gets the table, empty (its seek reads the seconds only).
 */
const implementations = unmigratedImplementations;

const at = eventTime;
const tenth = (second: number, ms: number) => at(second, ms).slice(0, 21);

const event = eventRow;

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`notification_tenths backfill on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    const env = newId();
    const other = newId();
    const moved = event(env, at(3, 50));

    async function counts(): Promise<string[]> {
      const rows = await database.db.selectFrom('notification_tenths').select(['environment_id', 'bucket', 'n']).execute();
      return rows.map((row) => `${row.environment_id === env ? 'env' : 'other'} ${row.bucket} ${Number(row.n)}`).sort();
    }

    beforeAll(async () => {
      database = await implementation.open();
      const before0033 = { getMigrations: async () => Object.fromEntries(Object.entries(await migrationProvider.getMigrations()).filter(([name]) => name < '0033')) };
      const { error } = await (await migratorFor(database.db, database.dialect, before0033)).migrateToLatest();
      if (error) throw error;
      await database.db
        .insertInto('notifications')
        .values([event(env, at(1, 0)), event(env, at(1, 99)), event(env, at(1, 100)), event(env, at(2, 950)), event(other, at(1, 10)), moved])
        .execute();
      await migrateToLatest(database.db, database.dialect);
    });
    afterAll(async () => database?.close());

    it.skipIf(implementation.name !== 'SQLite')('counts the events already stored, per environment and tenth of a second', async () => {
      expect(await counts()).toEqual([`env ${tenth(1, 0)} 2`, `env ${tenth(1, 100)} 1`, `env ${tenth(2, 950)} 1`, `env ${tenth(3, 50)} 1`, `other ${tenth(1, 0)} 1`].sort());
    });

    it.skipIf(implementation.name !== 'SQLite')('then follows inserts, deletes and moved events', async () => {
      await database.db.insertInto('notifications').values(event(env, at(2, 999))).execute();
      await database.db.deleteFrom('notifications').where('environment_id', '=', other).execute();
      await database.db.updateTable('notifications').set({ created_at: at(1, 150) }).where('id', '=', moved.id).execute();
      expect(await counts()).toEqual([`env ${tenth(1, 0)} 2`, `env ${tenth(1, 100)} 2`, `env ${tenth(2, 950)} 2`].sort());
    });

    it.skipIf(implementation.name !== 'PostgreSQL')('leaves the table empty on PostgreSQL', async () => {
      await database.db.insertInto('notifications').values(event(env, at(4, 0))).execute();
      expect(await counts()).toEqual([]);
    });
  });
}
