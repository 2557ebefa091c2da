import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { migrateToLatest, migratorFor } from '../../../src/store/sql/migrate.js';
import { migrationProvider } from '../../../src/store/sql/migrations.js';
import type { TestSqlDatabase } from '../../helpers/databases.js';
import { eventRow, eventTime, unmigratedImplementations } from '../../helpers/migration-events.js';

/**
 * Migration 0038 on a database that holds data: the context indexes keep the rows with context keys only, the events'
 * email index the events with an email only, and (SQLite) the count tables, remade WITHOUT ROWID, keep every count and
 * their upserts.
 */
for (const implementation of unmigratedImplementations) {
  describe.skipIf(!implementation.available)(`migration 0038 on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    const env = newId();
    const withKeys = { ...eventRow(env, eventTime(1, 0)), context_keys_norm: 'tenant:a', subscriber_email: 'ada@example.com' };
    const without = eventRow(env, eventTime(2, 0));

    beforeAll(async () => {
      database = await implementation.open();
      const before0038 = { getMigrations: async () => Object.fromEntries(Object.entries(await migrationProvider.getMigrations()).filter(([name]) => name < '0038')) };
      const { error } = await (await migratorFor(database.db, database.dialect, before0038)).migrateToLatest();
      if (error) throw error;
      await database.db.insertInto('notifications').values([withKeys, without]).execute();
      await database.db
        .insertInto('message_counters')
        .values([
          { environment_id: env, scope: 'all', shard: 0, count: 7 },
          { environment_id: env, scope: 'subscriber:sub-1', shard: 0, count: 3 },
          { environment_id: env, scope: 'context:', shard: 0, count: 4 },
        ])
        .execute();
      await database.db
        .insertInto('overview_counts')
        .values({ environment_id: env, hour: '2026-03-01T10', channel: 'in_app', provider_id: 'herald', workflow_id: 'w', outcome: 'sent', shard: 0, count: 5 })
        .execute();
      await migrateToLatest(database.db, database.dialect);
    });
    afterAll(async () => database?.close());

    it('keeps the counts, and their upserts still add to them', async () => {
      await database.db
        .insertInto('message_counters')
        .values({ environment_id: env, scope: 'all', shard: 0, count: 2 })
        .onConflict((oc) => oc.columns(['environment_id', 'scope', 'shard']).doUpdateSet({ count: sql<number>`message_counters.count + excluded.count` }))
        .execute();
      const rows = await database.db.selectFrom('message_counters').select(['scope', 'count']).where('environment_id', '=', env).orderBy('scope').execute();
      expect(rows.map((row) => `${row.scope} ${Number(row.count)}`)).toEqual(['all 9', 'context: 4', 'subscriber:sub-1 3']);
    });

    it.skipIf(implementation.name !== 'SQLite')('remakes the count tables WITHOUT ROWID on SQLite (no separate index of their key)', async () => {
      for (const table of ['message_counters', 'overview_counts', 'overview_latency']) {
        const { rows } = await sql<{ name: string; sql: string | null }>`select name, sql from sqlite_schema where tbl_name = ${table}`.execute(database.db);
        expect(rows.map((row) => row.name)).toEqual([table]);
        expect(rows[0]!.sql).toMatch(/without rowid$/i);
      }
      const overview = await database.db.selectFrom('overview_counts').select('count').where('environment_id', '=', env).execute();
      expect(overview.map((row) => Number(row.count))).toEqual([5]);
    });

    it('indexes the events with context keys and with an email only', async () => {
      const definitions =
        implementation.name === 'SQLite'
          ? (await sql<{ name: string; sql: string }>`select name, sql from sqlite_schema where name in ('notifications_env_context_list', 'notifications_env_email_list', 'messages_env_context_list')`.execute(database.db)).rows
          : (await sql<{ name: string; sql: string }>`select indexname as name, indexdef as sql from pg_indexes where schemaname = current_schema() and indexname in ('notifications_env_context_list', 'notifications_env_email_list', 'messages_env_context_list')`.execute(database.db)).rows;
      const byName = Object.fromEntries(definitions.map((row) => [row.name, row.sql]));
      expect(byName.notifications_env_context_list).toMatch(/where .*context_keys_norm"? <> ''/i);
      expect(byName.messages_env_context_list).toMatch(/where .*context_keys_norm"? <> ''/i);
      expect(byName.notifications_env_email_list).toMatch(/where .*subscriber_email"? is not null/i);
    });
  });
}
