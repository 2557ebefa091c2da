import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/sql/schema.js';
import { BACKEND_SHARD_SQL } from '../../../src/store/sql/backend-shard.js';
import { HeldStatementBatches } from '../../../src/store/sql/held-statement-batches.js';
import type { StatementGroup } from '../../../src/store/sql/one-statement.js';
import { openTestPostgres, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/**
 * PostgreSQL: held writes made while every lane is busy share one statement (BENCHMARKS.md, session 29), and each
 * caller still gets its own write's outcome: a combined statement that fails wrote nothing and its groups go alone.
 */
const available = await servicesAvailable(['PostgreSQL']);

describe.skipIf(!available)('HeldStatementBatches', () => {
  let database: TestSqlDatabase;
  let db: Kysely<Database>;

  beforeAll(async () => {
    database = await openTestPostgres({ migrate: false });
    db = database.db;
    await sql`create table m (id text primary key)`.execute(db);
    await sql`create table c (scope text, shard integer, n integer not null, primary key (scope, shard))`.execute(db);
  });

  afterAll(async () => {
    await database?.close();
  });

  /** A delivery-like write: a message, the counters that count it (an environment-wide one on the connection's shard, one named by value), a last update. */
  const write = (id: string, subscriber: string): StatementGroup => ({
    before: [
      { name: 'inserted', query: CompiledQuery.raw('insert into m (id) values ($1) returning id', [id]) },
      CompiledQuery.raw(
        `insert into c (scope, shard, n) select scope, shard, 1 from (values ('all', ${BACKEND_SHARD_SQL}), ($1::text, 0)) as v (scope, shard) where exists (select 1 from inserted) ` +
          'on conflict (scope, shard) do update set n = c.n + 1',
        [subscriber],
      ),
    ],
    last: CompiledQuery.raw('insert into c (scope, shard, n) values ($1, 0, 1) on conflict (scope, shard) do update set n = c.n + 1', [`last-${id}`]),
  });

  /** Counts the statements sent. */
  const counting = () => {
    let statements = 0;
    const executor = { executeQuery: (query: CompiledQuery) => ((statements += 1), db.executeQuery(query)) } as unknown as Kysely<Database>;
    return { executor, statements: () => statements };
  };

  const count = async (scope: string) => Number((await sql<{ n: string }>`select coalesce(sum(n), 0) as n from c where scope = ${scope}`.execute(db)).rows[0]!.n);

  it('sends writes made while the lanes are busy as one statement, every write committed and counted once', async () => {
    const { executor, statements } = counting();
    const batches = new HeldStatementBatches(executor, 30_000, 1, 8);
    await Promise.all(Array.from({ length: 9 }, (_, i) => batches.run(write(`a${i}`, `sub-a${i}`))));
    // The first alone (nothing in flight), the eight made meanwhile together.
    expect(statements()).toBe(2);
    expect(await count('all')).toBe(9);
    for (let i = 0; i < 9; i++) {
      expect(await count(`sub-a${i}`)).toBe(1);
      expect(await count(`last-a${i}`)).toBe(1);
    }
  });

  it('fails only the write whose row is taken, and writes the others of its statement', async () => {
    await batches1().run(write('taken', 'sub-t'));
    const { executor, statements } = counting();
    const batches = new HeldStatementBatches(executor, 30_000, 1, 8);
    const results = await Promise.allSettled([write('b0', 'sub-b0'), write('b1', 'sub-b1'), write('taken', 'sub-t2'), write('b3', 'sub-b3')].map((group) => batches.run(group)));
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    // b0 alone; b1, taken, b3 together (refused), then each alone.
    expect(statements()).toBe(5);
    expect(await count('sub-t2')).toBe(0);
    expect(await count('last-taken')).toBe(1);
    for (const id of ['b0', 'b1', 'b3']) expect(await count(`last-${id}`)).toBe(1);
  });

  it('writes groups that add to one row named by value (one subscriber twice) each alone, both counted', async () => {
    const before = await count('all');
    const { executor, statements } = counting();
    const batches = new HeldStatementBatches(executor, 30_000, 1, 8);
    await Promise.all([write('c0', 'sub-c'), write('c1', 'sub-same'), write('c2', 'sub-same')].map((group) => batches.run(group)));
    expect(await count('sub-same')).toBe(2);
    expect(await count('all')).toBe(before + 3);
    // c0 alone; c1 and c2 together, refused (one row twice), then each alone.
    expect(statements()).toBe(4);
  });

  it('does not put writes with a key in common into one statement', async () => {
    const { executor, statements } = counting();
    const batches = new HeldStatementBatches(executor, 30_000, 1, 8);
    const runs = [write('e0', 'sub-e0'), write('e1', 'sub-e'), write('e2', 'sub-e'), write('e3', 'sub-e3')].map((group, i) => batches.run(group, [i === 0 ? 'sub-e0' : i === 3 ? 'sub-e3' : 'sub-e']));
    await Promise.all(runs);
    // e0 alone; e1 with e3 (e2 waits: its key is e1's); e2 alone. No statement refused.
    expect(statements()).toBe(3);
    expect(await count('sub-e')).toBe(2);
  });

  it('puts only writes of one shape into one statement (the others wait for the next)', async () => {
    const { executor, statements } = counting();
    const batches = new HeldStatementBatches(executor, 30_000, 1, 8);
    const other = (id: string): StatementGroup => ({ before: [], last: CompiledQuery.raw('insert into m (id) values ($1)', [id]) });
    await Promise.all([write('f0', 'sub-f0'), other('f1'), write('f2', 'sub-f2'), other('f3'), write('f4', 'sub-f4')].map((group) => batches.run(group)));
    // f0 alone; f1 with f3 (the first waiting one's shape); f2 with f4.
    expect(statements()).toBe(3);
    expect(await count('all')).toBeGreaterThanOrEqual(3);
    expect(Number((await sql<{ n: string }>`select count(*) as n from m where id in ('f1', 'f3')`.execute(db)).rows[0]!.n)).toBe(2);
  });

  it('keeps the batch under the parameter limit', async () => {
    const { executor, statements } = counting();
    // Each write has 3 parameters: at most two per statement.
    const batches = new HeldStatementBatches(executor, 6, 1, 8);
    await Promise.all(Array.from({ length: 5 }, (_, i) => batches.run(write(`d${i}`, `sub-d${i}`))));
    // d0 alone, then d1+d2, d3+d4.
    expect(statements()).toBe(3);
    expect(await count('all')).toBeGreaterThanOrEqual(5);
  });

  const batches1 = () => new HeldStatementBatches(db, 30_000, 1, 8);
});
