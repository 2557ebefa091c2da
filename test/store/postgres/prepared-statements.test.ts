import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../src/store/postgres/connection.js';
import { markPrepared, preparedGeneration } from '../../../src/store/postgres/prepared-statements.js';
import { ReusableQuery } from '../../../src/store/sql/reusable-query.js';
import { createTestSchema, servicesAvailable } from '../../helpers/databases.js';

/** Hot statements run as named (prepared) statements on PostgreSQL; list pages do not; a stale one falls back. */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL prepared statements', () => {
  it('prepares the statements built once per shape, not list pages, and survives a column added under them', async () => {
    const schema = await createTestSchema();
    // One connection: what it prepared is in its pg_prepared_statements.
    const db = openPostgres(schema.url, 1);
    try {
      await sql`create table probe (id text primary key, body text)`.execute(db);
      await sql`insert into probe values ('a', 'first'), ('b', 'second')`.execute(db);
      const byId = new ReusableQuery((kysely, p: { id: string }) => (kysely as any).selectFrom('probe').selectAll().where('id', '=', p.id));
      const page = new ReusableQuery((kysely, p: { id: string }) => (kysely as any).selectFrom('probe').selectAll().where('id', '>=', p.id).orderBy('id').limit(10));
      expect((await byId.execute(db, 'postgres', { id: 'a' })).rows).toEqual([{ id: 'a', body: 'first' }]);
      expect((await byId.execute(db, 'postgres', { id: 'b' })).rows).toEqual([{ id: 'b', body: 'second' }]);
      expect((await page.execute(db, 'postgres', { id: 'a' })).rows).toHaveLength(2);
      const prepared = async () =>
        (await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db)).rows.filter((row) => row.statement.includes('"probe"'));
      const statements = await prepared();
      expect(statements).toHaveLength(1);
      expect(statements[0]!.name).toMatch(/^herald_\d+$/);
      expect(statements[0]!.statement).toContain('where "id" = $1');

      // A migration adds a column while the process runs: the prepared `select *` is refused once, then runs unnamed.
      await sql`alter table probe add column extra text default 'x'`.execute(db);
      expect((await byId.execute(db, 'postgres', { id: 'a' })).rows).toEqual([{ id: 'a', body: 'first', extra: 'x' }]);
      expect((await byId.execute(db, 'postgres', { id: 'a' })).rows).toEqual([{ id: 'a', body: 'first', extra: 'x' }]);

      // Texts without parameters, and unmarked ones, run as before.
      markPrepared('select 1 as one');
      expect((await sql`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.destroy();
      await schema.drop();
    }
  });

  it('prepares a statement again under a new name after 256 and 4,096 runs on one connection', async () => {
    expect([0, 255, 256, 4095, 4096, 65_535, 65_536, 1e9].map((run) => preparedGeneration('herald_7', run))).toEqual([
      'herald_7', 'herald_7', 'herald_7_g1', 'herald_7_g1', 'herald_7_g2', 'herald_7_g2', 'herald_7_g3', 'herald_7_g3',
    ]);
    const schema = await createTestSchema();
    const db = openPostgres(schema.url, 1);
    try {
      await sql`create table grown (id text primary key, body text)`.execute(db);
      await sql`insert into grown select 'k' || i, 'v' || i from generate_series(1, 300) as i`.execute(db);
      const byId = new ReusableQuery((kysely, p: { id: string }) => (kysely as any).selectFrom('grown').selectAll().where('id', '=', p.id));
      for (let run = 1; run <= 300; run++) {
        expect((await byId.execute(db, 'postgres', { id: `k${run}` })).rows).toEqual([{ id: `k${run}`, body: `v${run}` }]);
      }
      const statements = (
        await sql<{ name: string; generic_plans: string; custom_plans: string }>`select name, generic_plans, custom_plans from pg_prepared_statements where statement like '%"grown"%' order by name`.execute(db)
      ).rows;
      expect(statements.map((row) => row.name.replace(/^herald_\d+/, 'herald_N'))).toEqual(['herald_N', 'herald_N_g1']);
      // The first name ran 256 times, the second the other 44: each planned anew (five custom plans first).
      expect(statements.map((row) => Number(row.generic_plans) + Number(row.custom_plans))).toEqual([256, 44]);
    } finally {
      await db.destroy();
      await schema.drop();
    }
  });
});
