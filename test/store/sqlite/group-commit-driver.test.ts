import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommitSqliteDriver, groupCommitSqliteDialect } from '../../../src/store/sqlite/group-commit-driver.js';
import type { CommitSums } from '../../../src/store/sql/snapshot-reads.js';

interface TestDb {
  items: { id: string; value: number };
}

/** The driver on a real SQLite file, with its COMMITs counted and a second connection to check durability. */
describe('GroupCommitSqliteDriver', () => {
  let dir: string;
  let sqlite: BetterSqlite3.Database;
  let db: Kysely<TestDb>;
  let other: BetterSqlite3.Database;
  let driver: GroupCommitSqliteDriver;
  let commits: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herald-group-commit-'));
    sqlite = new BetterSqlite3(join(dir, 'test.sqlite'));
    sqlite.pragma('journal_mode = WAL');
    commits = 0;
    const exec = sqlite.exec.bind(sqlite);
    sqlite.exec = ((source: string) => {
      if (source === 'commit') commits++;
      return exec(source);
    }) as typeof sqlite.exec;
    driver = new GroupCommitSqliteDriver(sqlite);
    db = new Kysely<TestDb>({ dialect: groupCommitSqliteDialect(sqlite, driver) });
    await sql`create table items (id text primary key, value integer not null)`.execute(db);
    other = new BetterSqlite3(join(dir, 'test.sqlite'), { readonly: true });
    commits = 0;
  });

  afterEach(async () => {
    other.close();
    await db.destroy();
    if (sqlite.open) sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (id: string, value = 1) => db.insertInto('items').values({ id, value }).execute();
  const durableIds = () => (other.prepare('select id from items order by id').all() as Array<{ id: string }>).map((row) => row.id);

  it('commits concurrent writes together, and each write resolves only once it is durable', async () => {
    const ids = Array.from({ length: 50 }, (_, index) => `item-${String(index).padStart(2, '0')}`);
    await Promise.all(ids.map(async (id) => {
      await insert(id);
      // Seen by another connection: committed before this write's promise resolved.
      expect(other.prepare('select id from items where id = ?').get(id)).toEqual({ id });
    }));
    expect(commits).toBe(1);
    expect(durableIds()).toEqual(ids);
  });

  it('returns rows as better-sqlite3 objects would: every column by name, a later column of the same name winning', async () => {
    const returned = await db.insertInto('items').values({ id: 'a', value: 3 }).returning(['id', 'value']).execute();
    expect(returned).toEqual([{ id: 'a', value: 3 }]);
    await insert('b', 5);
    const query = sql<Record<string, unknown>>`select i.id, i.value, j.value as value, null as empty from items i join items j on j.id = 'b' order by i.id`;
    const expected = other.prepare(query.compile(db).sql).all();
    expect(expected).toEqual([{ id: 'a', value: 5, empty: null }, { id: 'b', value: 5, empty: null }]);
    for (let run = 0; run < 2; run++) expect((await query.execute(db)).rows).toEqual(expected);
    expect(await db.selectFrom('items').select('value').where('id', '=', 'missing').execute()).toEqual([]);
  });

  it('lets a flow read its own write before the commit', async () => {
    const write = insert('a', 7);
    const row = await db.selectFrom('items').selectAll().where('id', '=', 'a').executeTakeFirst();
    expect(row).toEqual({ id: 'a', value: 7 });
    await write;
  });

  it('fails only the statement that breaks a constraint; the rest of the group commits', async () => {
    await insert('dup');
    const outcomes = await Promise.allSettled([insert('x'), insert('dup'), insert('y')]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(durableIds()).toEqual(['dup', 'x', 'y']);
  });

  it('runs an explicit transaction atomically: its rollback keeps the writes of other flows', async () => {
    const failing = db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 't1', value: 1 }).execute();
      await new Promise((resolve) => setTimeout(resolve, 5));
      await trx.insertInto('items').values({ id: 't2', value: 2 }).execute();
      throw new Error('abort');
    });
    const outside = insert('outside');
    await expect(failing).rejects.toThrow('abort');
    await outside;
    expect(durableIds()).toEqual(['outside']);
  });

  it('makes other statements wait while an explicit transaction is open, and commits it durably', async () => {
    const order: string[] = [];
    let outside: Promise<unknown> = Promise.resolve();
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 'in-tx', value: 1 }).execute();
      outside = insert('outside').then(() => order.push('outside write'));
      await new Promise((resolve) => setTimeout(resolve, 10));
      // The other flow's statement has not run in the middle of the transaction.
      const seen = await trx.selectFrom('items').select('id').execute();
      order.push(`tx sees ${seen.map((row) => row.id).join(',')}`);
    });
    expect(durableIds()).toEqual(['in-tx']);
    await outside;
    expect(order).toEqual(['tx sees in-tx', 'outside write']);
    expect(durableIds()).toEqual(['in-tx', 'outside']);
  });

  it('rejects the writes of the shared transaction when the database is closed inside an explicit transaction', async () => {
    let transactionOpen!: () => void;
    const opened = new Promise<void>((resolve) => (transactionOpen = resolve));
    const write = insert('before-close');
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 'in-tx', value: 1 }).execute();
      transactionOpen();
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    await opened;
    await db.destroy();
    await expect(write).rejects.toThrow('closed before these writes were committed');
    await expect(transaction).rejects.toThrow();
    expect(durableIds()).toEqual([]);
  });

  const compiledInsert = (id: string, value = 1) => db.insertInto('items').values({ id, value }).compile();

  it('writes a block of statements with nothing in between, in the shared commit, and resolves once it is durable', async () => {
    const order: string[] = [];
    const outside = insert('outside').then(() => order.push('outside durable'));
    const block = driver.writeTogether((run) => {
      run(compiledInsert('w1'));
      // Nothing else runs inside the block: the other flow's statement, started first, is still on its way.
      order.push(`block sees ${(run(db.selectFrom('items').select('id').orderBy('id').compile()).rows as Array<{ id: string }>).map((row) => row.id).join(',')}`);
      run(compiledInsert('w2'));
      return 'done';
    });
    expect(await block).toBe('done');
    expect(durableIds()).toEqual(['outside', 'w1', 'w2']);
    await outside;
    expect(order).toEqual(['block sees w1', 'outside durable']);
    expect(commits).toBe(1);
  });

  it('writes nothing of a block whose statement fails, and keeps the writes of other flows in the same commit', async () => {
    await insert('dup');
    const before = insert('before');
    const failing = driver.writeTogether((run) => {
      run(compiledInsert('w1'));
      run(compiledInsert('dup'));
    });
    const after = insert('after');
    await expect(failing).rejects.toThrow(/UNIQUE/);
    await Promise.all([before, after]);
    expect(durableIds()).toEqual(['after', 'before', 'dup']);
    // The connection is usable afterwards, in and out of blocks.
    await driver.writeTogether((run) => run(compiledInsert('w3')));
    expect(durableIds()).toEqual(['after', 'before', 'dup', 'w3']);
  });

  it("sums the blocks' counts per row and writes them once, in the commit; a block that fails adds nothing", async () => {
    await sql`create table counts (id text primary key, n integer not null)`.execute(db);
    const written: Array<Array<{ row: string; count: number }>> = [];
    const sums: CommitSums<string> = {
      write: (rows) => {
        written.push(rows);
        return rows.map(({ row, count }) => sql`insert into counts (id, n) values (${row}, ${count}) on conflict (id) do update set n = n + excluded.n`.compile(db));
      },
    };
    await insert('dup');
    commits = 0;
    const blocks = [
      driver.writeTogether((run, add) => void (run(compiledInsert('b1')), add(sums, 'a', 'a', 1), add(sums, 'b', 'b', 1))),
      driver.writeTogether((run, add) => void (add(sums, 'a', 'a', 1), run(compiledInsert('dup')))),
      driver.writeTogether((run, add) => void (run(compiledInsert('b3')), add(sums, 'a', 'a', 1))),
    ];
    const settled = await Promise.allSettled(blocks);
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(commits).toBe(1);
    expect(written).toEqual([[{ row: 'a', count: 2 }, { row: 'b', count: 1 }]]);
    expect(other.prepare('select id, n from counts order by id').all()).toEqual([{ id: 'a', n: 2 }, { id: 'b', n: 1 }]);
    // A later commit starts from nothing.
    await driver.writeTogether((_run, add) => add(sums, 'b', 'b', 5));
    expect(other.prepare('select id, n from counts order by id').all()).toEqual([{ id: 'a', n: 2 }, { id: 'b', n: 6 }]);
  });

  it('rolls the whole commit back when writing its sums fails', async () => {
    const sums: CommitSums<string> = { write: () => [sql`insert into missing_table (id) values (1)`.compile(db)] };
    const block = driver.writeTogether((run, add) => void (run(compiledInsert('s1')), add(sums, 'a', 'a', 1)));
    const outside = insert('s2');
    await expect(block).rejects.toThrow(/missing_table/);
    await expect(outside).rejects.toThrow(/missing_table/);
    expect(durableIds()).not.toContain('s1');
    expect(durableIds()).not.toContain('s2');
    await insert('s3');
    expect(durableIds()).toContain('s3');
  });

  it('waits for an open explicit transaction before it writes', async () => {
    const order: string[] = [];
    let block: Promise<unknown> = Promise.resolve();
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id: 'in-tx', value: 1 }).execute();
      block = driver.writeTogether((run) => {
        order.push('block');
        return run(compiledInsert('w1'));
      });
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push('tx ends');
    });
    await block;
    expect(order).toEqual(['tx ends', 'block']);
    expect(durableIds()).toEqual(['in-tx', 'w1']);
  });

  it('commits pending writes when the database is closed', async () => {
    const write = insert('last');
    // Once the statement has run (the shared transaction is open), close before the scheduled commit.
    while (!sqlite.inTransaction) await Promise.resolve();
    await db.destroy();
    await write;
    expect(durableIds()).toEqual(['last']);
  });

  it('reads a block in one read transaction: one snapshot against another connection\'s write, nothing left open, the shared one untouched', async () => {
    await insert('a', 1);
    const writer = new BetterSqlite3(join(dir, 'test.sqlite'));
    try {
      const count = db.selectFrom('items').select((eb) => eb.fn.countAll<number>().as('n')).compile();
      // Another connection (the CLI, another process) commits between the block's two reads: the second still sees
      // the state of the first (without the read transaction each statement saw the file as of its own start).
      const seen = await driver.readTogether((read) => {
        const first = read(count)[0]!.n;
        writer.prepare("insert into items (id, value) values ('b', 2)").run();
        return [first, read(count)[0]!.n];
      });
      expect(seen).toEqual([1, 1]);
      expect(sqlite.inTransaction).toBe(false);
      expect(await driver.readTogether((read) => read(count)[0]!.n)).toBe(2);
      // A failing block ends its read transaction too.
      await expect(driver.readTogether(() => { throw new Error('boom'); })).rejects.toThrow('boom');
      expect(sqlite.inTransaction).toBe(false);
      // Inside the shared write transaction the block reads it (its pending write) and leaves its commit to the group.
      const write = insert('c', 3);
      while (!sqlite.inTransaction) await Promise.resolve();
      const committed = commits;
      expect(await driver.readTogether((read) => read(count)[0]!.n)).toBe(3);
      expect(sqlite.inTransaction).toBe(true);
      expect(commits).toBe(committed);
      await write;
      expect(commits).toBe(committed + 1);
      expect(durableIds()).toEqual(['a', 'b', 'c']);
    } finally {
      writer.close();
    }
  });

  it('writes a LIMIT as cast(? as integer), so SQLite does not plan the cached statement again at every run, with the same rows', async () => {
    await Promise.all(['a', 'b', 'c', 'd'].map((id, index) => insert(id, index)));
    const page = (limit: number, offset?: number) => {
      const query = db.selectFrom('items').select('id').orderBy('id').limit(limit);
      return offset === undefined ? query : query.offset(offset);
    };
    // A bare `limit ?` is read by SQLite's planner (3.53) and marks the statement for a new plan whenever it is bound.
    expect(page(2).compile().sql).toBe('select "id" from "items" order by "id" limit cast(? as integer)');
    expect(page(2, 1).compile().sql).toBe('select "id" from "items" order by "id" limit cast(? as integer) offset ?');
    const ids = async (limit: number, offset?: number) => (await page(limit, offset).execute()).map((row) => row.id);
    expect(await ids(2)).toEqual(['a', 'b']);
    expect(await ids(2, 1)).toEqual(['b', 'c']);
    expect(await ids(0)).toEqual([]);
    expect(await ids(-1, 3)).toEqual(['d']);
    expect(await ids(10)).toEqual(['a', 'b', 'c', 'd']);
  });
});
