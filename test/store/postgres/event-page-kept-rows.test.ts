import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../../src/store/postgres/connection.js';
import { migrateToLatest } from '../../../src/store/sql/migrate.js';
import { firstTextPage, seekPage } from '../../../src/store/sql/notification-repository.js';
import type { Database } from '../../../src/store/sql/schema.js';
import { growEvents } from '../../helpers/grow-events.js';
import { createTestSchema, servicesAvailable, type TestSchema } from '../../helpers/databases.js';

/**
 * The events page's statements on PostgreSQL (firstTextPage, seekPage with texts) send an event whose kept text is
 * used as its id and text only: every other column null (the API reads none of them). An event without a usable text
 * (none kept, or its print no longer matching) comes with its whole row.
 */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL events page rows with kept texts', () => {
  let schema: TestSchema;
  let db: Kysely<Database>;
  const env = 'env-kept-rows';
  const columns = [
    'environment_id', 'organization_id', 'subscriber_id', 'external_subscriber_id', 'subscriber_email', 'template_id', 'transaction_id',
    'digested_notification_id', 'channels_mask', 'severity', 'context_keys_norm', 'document', 'created_at', 'updated_at',
  ];

  beforeAll(async () => {
    schema = await createTestSchema();
    db = openPostgres(schema.url, 1);
    await migrateToLatest(db, 'postgres');
    await growEvents(db, env, 1, 40);
    // Event 0x20: no kept text; event 0x1e: a detail added after its text was kept (the print no longer matches).
    await sql`delete from notification_texts where notification_id = ${'20'.padStart(24, '0')}`.execute(db);
    await sql`insert into execution_details (id, environment_id, job_id, notification_id, status, detail, is_retry, is_test, provider_id, raw, source, created_at)
      values ('late', ${env}, ${'j' + '1e'.padStart(24, '0')}, ${'1e'.padStart(24, '0')}, 'Success', 'x', 0, 0, null, null, 'Internal', '2026-11-26T10:00:01.000Z')`.execute(db);
  }, 60_000);
  afterAll(async () => {
    await db?.destroy();
    await schema?.drop();
  });

  it('sends only the id and text of a kept event, the whole row of the others', async () => {
    const p = { environmentId: env, before: '2030-01-01T00:00:00.000Z', limit: 11 };
    for (const query of [firstTextPage({ ...p, offset: 0 }), seekPage({ ...p, offset: 5 }, true), seekPage({ ...p, offset: 5, after: '2026-01-01T00:00:00.000Z' }, true)]) {
      const { rows } = await db.executeQuery(query as never);
      expect(rows).toHaveLength(11);
      for (const row of rows as Array<Record<string, unknown>>) {
        const assembled = row.id === '20'.padStart(24, '0') || row.id === '1e'.padStart(24, '0');
        if (assembled) {
          expect(row.kept_text).toBeNull();
          expect(row.environment_id).toBe(env);
          expect(row.created_at).toMatch(/^2026-11-26T10:00:00\.\d{3}Z$/);
          expect(row.document).toBe('{}');
          expect(row.transaction_id).toBe(`t${Number.parseInt(row.id as string, 16)}`);
        } else {
          expect(row.kept_text).toBe(`{"kept":t${Number.parseInt(row.id as string, 16)}}`);
          for (const column of columns) expect(row[column], `${row.id} ${column}`).toBeNull();
        }
      }
      expect((rows as Array<{ id: string }>).some((row) => row.id === '20'.padStart(24, '0'))).toBe(true);
    }
  });
});
