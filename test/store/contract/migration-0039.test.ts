import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { migrateToLatest, migratorFor } from '../../../src/store/sql/migrate.js';
import { migrationProvider } from '../../../src/store/sql/migrations.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import type { TestSqlDatabase } from '../../helpers/databases.js';
import { eventRow, eventTime, unmigratedImplementations } from '../../helpers/migration-events.js';

/**
 * Migration 0039 on a database that holds execution details: every detail survives with every column, is read by its
 * job and its event as before, and (SQLite) the table is one b-tree keyed (notification_id, id), WITHOUT ROWID, whose
 * writes still forget the event's kept text (0029's triggers, made again). PostgreSQL's table is left as it was.
 */
for (const implementation of unmigratedImplementations) {
  describe.skipIf(!implementation.available)(`migration 0039 on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: SqlStore;
    const env = newId();
    const event = eventRow(env, eventTime(1, 0));
    const jobId = newId();
    const jobRow = {
      id: jobId, environment_id: env, organization_id: 'org', notification_id: event.id, subscriber_id: 'sub', transaction_id: event.transaction_id,
      template_id: null, step_index: 0, type: 'in_app', status: 'completed', provider_id: 'novu', digest_group: null, document: '{}',
      created_at: event.created_at, updated_at: event.created_at,
    };
    // Ids out of time order on purpose: the reads order details by created_at, then id, not by the key.
    const details = [
      { id: newId(), status: 'Success', detail: 'Message sent to the subscriber inbox', provider_id: 'novu', raw: '{"a":1}', is_retry: 1, created_at: eventTime(1, 9) },
      { id: newId(), status: 'Pending', detail: 'Step created', provider_id: null, raw: null, is_retry: 0, created_at: eventTime(1, 1) },
      { id: newId(), status: 'Queued', detail: 'Step queued', provider_id: null, raw: null, is_retry: 0, created_at: eventTime(1, 2) },
    ].map((detail) => ({ ...detail, environment_id: env, job_id: jobId, notification_id: event.id, is_test: 0, source: 'Internal' }));

    beforeAll(async () => {
      database = await implementation.open();
      const before0039 = { getMigrations: async () => Object.fromEntries(Object.entries(await migrationProvider.getMigrations()).filter(([name]) => name < '0039')) };
      const { error } = await (await migratorFor(database.db, database.dialect, before0039)).migrateToLatest();
      if (error) throw error;
      await database.db.insertInto('notifications').values(event).execute();
      await database.db.insertInto('jobs').values(jobRow).execute();
      await database.db.insertInto('execution_details').values(details).execute();
      await migrateToLatest(database.db, database.dialect);
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
    });
    afterAll(async () => database?.close());

    it('keeps every detail with its columns, read by its job oldest first', async () => {
      const stored = await database.db.selectFrom('execution_details').selectAll().where('notification_id', '=', event.id).orderBy('created_at').execute();
      expect(stored.map((row) => ({ ...row, is_retry: Number(row.is_retry), is_test: Number(row.is_test) }))).toEqual(
        [...details].sort((a, b) => a.created_at.localeCompare(b.created_at)),
      );
      const job = await store.jobs.get(env, jobId);
      expect(job?.executionDetails.map((detail) => detail.detail)).toEqual(['Step created', 'Step queued', 'Message sent to the subscriber inbox']);
      expect(job?.executionDetails[2]).toMatchObject({ raw: '{"a":1}', providerId: 'novu', isRetry: true });
    });

    it.skipIf(implementation.name !== 'SQLite')('remakes execution_details WITHOUT ROWID keyed (notification_id, id), with no other index', async () => {
      const { rows } = await sql<{ name: string; type: string; sql: string | null }>`select name, type, sql from sqlite_schema where tbl_name = 'execution_details' order by name`.execute(
        database.db,
      );
      expect(rows.filter((row) => row.type === 'table').map((row) => row.sql)).toEqual([expect.stringMatching(/primary key \("notification_id", "id"\)\) without rowid$/i)]);
      expect(rows.filter((row) => row.type === 'index')).toEqual([]);
      expect(rows.filter((row) => row.type === 'trigger').map((row) => row.name)).toEqual([
        'notification_texts_execution_details_delete',
        'notification_texts_execution_details_insert',
        'notification_texts_execution_details_update',
      ]);
    });

    it.skipIf(implementation.name !== 'SQLite')("a detail written after it still forgets its event's kept text (0029's triggers)", async () => {
      const keep = () => database.db.insertInto('notification_texts').values({ notification_id: event.id, environment_id: env, text: '{}', print: null }).execute();
      const kept = async () => (await database.db.selectFrom('notification_texts').select('notification_id').where('notification_id', '=', event.id).execute()).length;
      await keep();
      await database.db.insertInto('execution_details').values({ ...details[0]!, id: newId() }).execute();
      expect(await kept()).toBe(0);
      await keep();
      await database.db.updateTable('execution_details').set({ status: 'Warning' }).where('id', '=', details[1]!.id).execute();
      expect(await kept()).toBe(0);
      await keep();
      await database.db.deleteFrom('execution_details').where('notification_id', '=', event.id).where('id', '=', details[2]!.id).execute();
      expect(await kept()).toBe(0);
    });

    it.skipIf(implementation.name !== 'PostgreSQL')('leaves PostgreSQL\'s table and indexes as they were', async () => {
      const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes where schemaname = current_schema() and tablename = 'execution_details' order by indexname`.execute(
        database.db,
      );
      expect(rows.map((row) => row.indexname)).toEqual(['execution_details_notification', 'execution_details_pkey']);
    });
  });
}
