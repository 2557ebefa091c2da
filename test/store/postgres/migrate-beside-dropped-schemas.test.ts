import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../src/store/postgres/connection.js';
import { migrateToLatest, pendingMigrations } from '../../../src/store/sql/migrate.js';
import { createTestSchema, servicesAvailable, TEST_POSTGRES_URL } from '../../helpers/databases.js';

/**
 * Migrating one schema while others on the same database are created and dropped (other deployments, or parallel
 * test files): Kysely's own introspection read every table of the database and looked each schema up by name, and
 * failed with "schema … does not exist" when one was dropped meanwhile (seen in CI with test files in parallel).
 */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL migrations beside schemas being dropped', () => {
  it('every migration succeeds while other schemas with tables come and go', async () => {
    let stop = false;
    const churn = async (worker: number) => {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        for (let round = 0; !stop; round++) {
          const name = `herald_churn_${process.pid}_${worker}_${round}`;
          await client.query(`create schema ${name}`);
          for (let table = 0; table < 15; table++) await client.query(`create table ${name}.t${table} (id serial primary key, a text, b text, c text)`);
          await client.query(`drop schema ${name} cascade`);
        }
      } finally {
        await client.end();
      }
    };
    const churning = [churn(0), churn(1)];
    try {
      for (let run = 0; run < 6; run++) {
        const schema = await createTestSchema();
        const db = openPostgres(schema.url, 2);
        try {
          expect((await migrateToLatest(db, 'postgres')).length).toBeGreaterThan(20);
          expect(await pendingMigrations(db, 'postgres')).toEqual([]);
        } finally {
          await db.destroy();
          await schema.drop();
        }
      }
    } finally {
      stop = true;
      await Promise.all(churning);
    }
  }, 120_000);
});
