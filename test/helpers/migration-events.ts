import { newId } from '../../src/domain/ids.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from './databases.js';

/** The two databases a migration test runs on, opened unmigrated so the test can migrate up to a given migration. */
export const unmigratedImplementations: Array<{ name: string; available: boolean; open: () => Promise<TestSqlDatabase> }> = [
  { name: 'SQLite', available: true, open: () => openTestSqlite({ migrate: false }) },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: () => openTestPostgres({ migrate: false }) },
];

/** A time `second` seconds and `ms` milliseconds after a fixed minute, as stored in created_at. */
export const eventTime = (second: number, ms: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, 0) + second * 1000 + ms).toISOString();

/** A minimal `notifications` row, inserted directly by the migration tests (no usecase runs before the migration). */
export function eventRow(environmentId: string, createdAt: string) {
  const id = newId();
  return {
    id, environment_id: environmentId, organization_id: 'org', subscriber_id: 'sub', external_subscriber_id: 'sub-1', subscriber_email: null,
    template_id: null, transaction_id: `tx-${id}`, digested_notification_id: null, channels_mask: 1, severity: null, context_keys_norm: '',
    document: '{}', created_at: createdAt, updated_at: createdAt,
  };
}
