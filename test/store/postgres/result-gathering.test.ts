import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openPostgres } from '../../../src/store/postgres/connection.js';
import { resultGathering } from '../../../src/store/postgres/result-gathering.js';
import { createTestSchema, servicesAvailable } from '../../helpers/databases.js';

const nextImmediate = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('result gathering', () => {
  it('hands on the results of one turn together, in order, after the turn and not in its microtasks', async () => {
    const gather = resultGathering();
    const resumed: string[] = [];
    const first = gather('a').then((value) => resumed.push(value));
    void gather('b').then((value) => resumed.push(value));
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(resumed).toEqual([]);
    await first;
    expect(resumed).toEqual(['a', 'b']);
    // A later turn's results wait for a callback of their own.
    const later = gather('c').then((value) => resumed.push(value));
    await Promise.resolve();
    expect(resumed).toEqual(['a', 'b']);
    await later;
    expect(resumed).toEqual(['a', 'b', 'c']);
  });

  it('keeps the object it was given', async () => {
    const gather = resultGathering();
    const value = { rows: [1] };
    expect(await gather(value)).toBe(value);
  });
});

/** `herald api`'s pool (gatherResults): reads continue through one setImmediate; writes and errors as before. */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL result gathering', () => {
  afterEach(() => vi.restoreAllMocks());

  it('gathers reads only, and answers every statement as the plain pool does', async () => {
    const schema = await createTestSchema();
    const gathered = openPostgres(schema.url, 2, { gatherResults: true });
    const plain = openPostgres(schema.url, 2);
    try {
      await sql`create table probe (id text primary key, body text)`.execute(plain);
      await sql`insert into probe values ('a', 'first'), ('b', 'second')`.execute(plain);
      const immediatesOf = async <T>(db: Kysely<any>, run: (db: Kysely<any>) => Promise<T>): Promise<{ result: T; immediates: number }> => {
        await nextImmediate();
        const spy = vi.spyOn(globalThis, 'setImmediate');
        try {
          const result = await run(db);
          return { result, immediates: spy.mock.calls.length };
        } finally {
          spy.mockRestore();
        }
      };
      const select = (db: Kysely<any>) => sql<{ id: string; body: string }>`select id, body from probe where id >= ${'a'} order by id`.execute(db);
      const insert = (id: string) => (db: Kysely<any>) => sql`insert into probe values (${id}, 'new')`.execute(db);

      const read = await immediatesOf(gathered, select);
      const readPlain = await immediatesOf(plain, select);
      expect(read.result.rows).toEqual(readPlain.result.rows);
      expect(read.result.rows).toEqual([{ id: 'a', body: 'first' }, { id: 'b', body: 'second' }]);
      expect(read.immediates).toBe(readPlain.immediates + 1);

      const write = await immediatesOf(gathered, insert('c'));
      const writePlain = await immediatesOf(plain, insert('d'));
      expect(write.result.numAffectedRows).toBe(1n);
      expect(write.immediates).toBe(writePlain.immediates);

      // Concurrent reads each get their own rows; an error is not held back and fails only its own statement.
      const pages = await Promise.all(['a', 'b', 'c', 'd'].map((id) => sql<{ id: string }>`select id from probe where id = ${id}`.execute(gathered)));
      expect(pages.map((page) => page.rows)).toEqual([[{ id: 'a' }], [{ id: 'b' }], [{ id: 'c' }], [{ id: 'd' }]]);
      await expect(sql`select * from missing_table`.execute(gathered)).rejects.toThrow(/missing_table/);
      const inTransaction = await gathered.transaction().execute(async (trx) => {
        await sql`insert into probe values ('e', 'in a transaction')`.execute(trx);
        return (await sql<{ body: string }>`select body from probe where id = 'e'`.execute(trx)).rows;
      });
      expect(inTransaction).toEqual([{ body: 'in a transaction' }]);
    } finally {
      await gathered.destroy();
      await plain.destroy();
      await schema.drop();
    }
  });
});
