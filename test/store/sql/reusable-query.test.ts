import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type CompiledQuery } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReusableInsert, ReusableQuery } from '../../../src/store/sql/reusable-query.js';
import type { Database } from '../../../src/store/sql/schema.js';

/** Compiled once per shape, then only re-bound: checked against what Kysely itself sends and returns. */
describe('ReusableQuery and ReusableInsert', () => {
  let db: Kysely<Database>;
  let sent: CompiledQuery[];

  beforeEach(async () => {
    sent = [];
    db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }),
      log: (event) => {
        sent.push(event.query);
      },
    });
    await sql`create table settings (key text primary key, value text not null default 'unset')`.execute(db);
    sent = [];
  });

  afterEach(async () => {
    await db.destroy();
  });

  const byKey = new ReusableQuery((db, p: { key: string }) =>
    db.selectFrom('settings').selectAll().where('key', '=', p.key).where('value', '!=', 'hidden'),
  );

  it('binds new values into the statement compiled for the first call, keeping the query’s own constants', async () => {
    await db.insertInto('settings').values([{ key: 'a', value: '1' }, { key: 'b', value: '2' }, { key: 'c', value: 'hidden' }]).execute();
    sent = [];
    expect((await byKey.execute(db, 'sqlite', { key: 'a' })).rows).toEqual([{ key: 'a', value: '1' }]);
    expect((await byKey.execute(db, 'sqlite', { key: 'b' })).rows).toEqual([{ key: 'b', value: '2' }]);
    expect((await byKey.execute(db, 'sqlite', { key: 'c' })).rows).toEqual([]);
    const direct = db.selectFrom('settings').selectAll().where('key', '=', 'b').where('value', '!=', 'hidden').compile();
    expect(sent[1].sql).toBe(direct.sql);
    expect(sent[1].parameters).toEqual(direct.parameters);
  });

  it('refuses a build that uses a parameter other than as a value', async () => {
    const structural = new ReusableQuery((db, p: { column: string }) =>
      db.selectFrom('settings').select(sql.ref(p.column).as('x')),
    );
    await expect(structural.execute(db, 'sqlite', { column: 'key' })).rejects.toThrow(/did not become parameters/);
  });

  it('inserts many rows through one compiled statement per row count, with what follows VALUES', async () => {
    const upsert = new ReusableInsert('settings', (query) =>
      query.onConflict((oc) => oc.column('key').doUpdateSet({ value: sql`excluded.value || '!'` })),
    );
    await upsert.execute(db, 'sqlite', [{ key: 'a', value: '1' }, { key: 'b', value: '2' }]);
    await upsert.execute(db, 'sqlite', [{ key: 'b', value: '3' }, { key: 'c', value: '4' }]);
    await upsert.execute(db, 'sqlite', [{ key: 'd', value: '5' }]);
    expect(sent.map((query) => query.sql)).toEqual([sent[0].sql, sent[0].sql, expect.not.stringContaining('), (')]);
    expect(await db.selectFrom('settings').selectAll().orderBy('key').execute()).toEqual([
      { key: 'a', value: '1' },
      { key: 'b', value: '3!' },
      { key: 'c', value: '4' },
      { key: 'd', value: '5' },
    ]);
  });

  it('leaves an undefined value out of the insert, so the column default applies, as Kysely does', async () => {
    const insert = new ReusableInsert('settings');
    await insert.execute(db, 'sqlite', [{ key: 'a', value: undefined as unknown as string }]);
    await insert.execute(db, 'sqlite', [{ key: 'b', value: 'set' }]);
    expect(await db.selectFrom('settings').selectAll().orderBy('key').execute()).toEqual([
      { key: 'a', value: 'unset' },
      { key: 'b', value: 'set' },
    ]);
  });

  it('sends rows whose defined columns differ through Kysely’s own insert', async () => {
    const rows = [{ key: 'b', value: 'set' }, { key: 'c', value: undefined as unknown as string }];
    await new ReusableInsert('settings').execute(db, 'sqlite', rows).catch(() => undefined);
    expect(sent[0].sql).toBe(db.insertInto('settings').values(rows).compile().sql);
  });
});
