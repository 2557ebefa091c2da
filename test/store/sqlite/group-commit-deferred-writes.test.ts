import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommitSqliteDriver, groupCommitSqliteDialect } from '../../../src/store/sqlite/group-commit-driver.js';

interface TestDb {
  items: { id: string; value: number };
}

/**
 * SPIKE (issue 24, session 26, h/emb-split): the group commit's opt-in `deferWrites` (HERALD_SPIKE_DEFERRED_WRITES=1),
 * which keeps SQLite's write lock only while the group's writes run at its commit, so another connection (another
 * process) can write between a write's call and its commit.
 */
describe('GroupCommitSqliteDriver with deferWrites (spike)', () => {
  let dir: string;
  let sqlite: BetterSqlite3.Database;
  let db: Kysely<TestDb>;
  let other: BetterSqlite3.Database;
  let driver: GroupCommitSqliteDriver;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herald-deferred-writes-'));
    sqlite = new BetterSqlite3(join(dir, 'test.sqlite'));
    sqlite.pragma('journal_mode = WAL');
    driver = new GroupCommitSqliteDriver(sqlite, undefined, { deferWrites: true });
    db = new Kysely<TestDb>({ dialect: groupCommitSqliteDialect(sqlite, driver) });
    await sql`create table items (id text primary key, value integer not null)`.execute(db);
    other = new BetterSqlite3(join(dir, 'test.sqlite'));
    other.pragma('busy_timeout = 0');
  });

  afterEach(async () => {
    other.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds no write lock between a write and its commit, and each write resolves durable with its own result', async () => {
    const first = db.insertInto('items').values({ id: 'a', value: 1 }).returning(['id', 'value']).execute();
    const second = db.insertInto('items').values({ id: 'b', value: 2 }).execute();
    // Another connection writes in between (busy_timeout 0: it would fail at once if the lock were held).
    other.prepare("insert into items (id, value) values ('z', 26)").run();
    expect(await first).toEqual([{ id: 'a', value: 1 }]);
    expect(Number((await second)[0]!.numInsertedOrUpdatedRows)).toBe(1);
    expect(other.prepare('select id from items order by id').all()).toEqual([{ id: 'a' }, { id: 'b' }, { id: 'z' }]);
  });

  it("gives a failing write its own error and commits the group's other writes", async () => {
    other.prepare("insert into items (id, value) values ('a', 0)").run();
    const duplicate = db.insertInto('items').values({ id: 'a', value: 1 }).execute();
    const fine = db.insertInto('items').values({ id: 'b', value: 2 }).execute();
    await expect(duplicate).rejects.toThrow(/UNIQUE/);
    await fine;
    expect(other.prepare('select id, value from items order by id').all()).toEqual([{ id: 'a', value: 0 }, { id: 'b', value: 2 }]);
  });

  it('runs kept writes before an explicit transaction, which holds the lock until the shared commit', async () => {
    const kept = db.insertInto('items').values({ id: 'a', value: 1 }).execute();
    const inside = db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('items').select('value').where('id', '=', 'a').executeTakeFirst();
      await trx.insertInto('items').values({ id: 'b', value: (row?.value ?? 0) + 1 }).execute();
    });
    await Promise.all([kept, inside]);
    expect(other.prepare('select id, value from items order by id').all()).toEqual([{ id: 'a', value: 1 }, { id: 'b', value: 2 }]);
  });

  it('runs writeTogether blocks at the commit, each with its result', async () => {
    const compiled = (id: string, value: number) => db.insertInto('items').values({ id, value }).compile();
    const block = driver.writeTogether((run) => {
      run(compiled('a', 1));
      return Number(run(compiled('b', 2)).numAffectedRows);
    });
    other.prepare("insert into items (id, value) values ('z', 26)").run();
    expect(await block).toBe(1);
    expect(other.prepare('select id from items order by id').all()).toEqual([{ id: 'a' }, { id: 'b' }, { id: 'z' }]);
  });
});
