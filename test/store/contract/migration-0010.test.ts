import type { Kysely, MigrationProvider } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { migrateToLatest, migratorFor } from '../../../src/store/sql/migrate.js';
import { migrationProvider } from '../../../src/store/sql/migrations.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/** Migration 0010 on a database that already has environments and keys: identifiers are backfilled, old keys stay hash-only. */
const implementations: Array<{ name: string; available: boolean; open: () => Promise<TestSqlDatabase> }> = [
  { name: 'SQLite', available: true, open: () => openTestSqlite({ migrate: false }) },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: () => openTestPostgres({ migrate: false }) },
];

const before0010: MigrationProvider = {
  async getMigrations() {
    const all = await migrationProvider.getMigrations();
    return Object.fromEntries(Object.entries(all).filter(([name]) => name < '0010'));
  },
};

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`migration 0010 on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    const environmentIds = [newId(), newId(), newId()];
    beforeAll(async () => {
      database = await implementation.open();
      const { error } = await (await migratorFor(database.db, database.dialect, before0010)).migrateToLatest();
      if (error) throw error;
      const legacy = database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      const createdAt = new Date().toISOString();
      await legacy
        .insertInto('environments')
        .values(environmentIds.map((id, i) => ({ id, organization_id: 'org', name: `env-${i}`, created_at: createdAt })))
        .execute();
      await legacy.insertInto('api_keys').values({ id: newId(), environment_id: environmentIds[0], key_hash: 'old-hash', created_at: createdAt }).execute();
      expect(await migrateToLatest(database.db, database.dialect)).toContain('0010_application_identifiers');
    });
    afterAll(async () => database?.close());

    it('gives every existing environment a distinct identifier', async () => {
      const rows = await database.db.selectFrom('environments').select(['id', 'identifier']).execute();
      expect(rows).toHaveLength(3);
      for (const row of rows) expect(row.identifier).toMatch(/^[A-Za-z0-9_-]{12}$/);
      expect(new Set(rows.map((row) => row.identifier)).size).toBe(3);
    });

    it('keeps keys made before it hash-only (their plaintext was never stored)', async () => {
      const key = await database.db.selectFrom('api_keys').selectAll().executeTakeFirstOrThrow();
      expect(key.key_enc).toBeNull();
      expect(key.key_hash).toBe('old-hash');
    });

    it('refuses a duplicate identifier', async () => {
      const identifier = (await database.db.selectFrom('environments').select('identifier').executeTakeFirstOrThrow()).identifier;
      await expect(
        database.db.insertInto('environments').values({ id: newId(), organization_id: 'org', name: 'dup', identifier, created_at: new Date().toISOString() }).execute(),
      ).rejects.toThrow();
    });
  });
}
