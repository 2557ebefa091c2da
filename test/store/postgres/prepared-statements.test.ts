import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../../src/store/postgres/connection.js';
import { markPrepared } from '../../../src/store/postgres/prepared-statements.js';
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
});
