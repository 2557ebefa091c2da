import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import { oneStatement, oneStatementOfMany, renumberParameters } from '../../../src/store/sql/one-statement.js';
import { BACKEND_SHARD_SQL } from '../../../src/store/sql/backend-shard.js';

describe('renumberParameters', () => {
  it('shifts every $n by the offset', () => {
    expect(renumberParameters('insert into "t" ("a", "b") values ($1, $2), ($3, $10)', 4)).toBe('insert into "t" ("a", "b") values ($5, $6), ($7, $14)');
  });

  it('leaves quoted identifiers and string literals alone, escaped quotes included', () => {
    expect(renumberParameters(`select "col$1", 'it''s $2', $1 from "we""ird$3" where x = $2`, 2)).toBe(`select "col$1", 'it''s $2', $3 from "we""ird$3" where x = $4`);
  });

  it('changes nothing at offset 0', () => {
    expect(renumberParameters('select $1', 0)).toBe('select $1');
  });
});

describe('oneStatement', () => {
  const insertA = CompiledQuery.raw('insert into "a" ("x", "y") values ($1, $2)', [1, 'one']);
  const insertB = CompiledQuery.raw('insert into "b" ("z") values ($1) returning "id"', ['two']);
  const update = CompiledQuery.raw('update "c" set "v" = $1 where "id" = $2', [3, 'c-1']);

  it('turns the statements before the last into CTEs and numbers the parameters in order', () => {
    const combined = oneStatement([insertA, { name: 'inserted', query: insertB }], update);
    expect(combined.sql).toBe('with s0 as (insert into "a" ("x", "y") values ($1, $2)), inserted as (insert into "b" ("z") values ($3) returning "id") update "c" set "v" = $4 where "id" = $5');
    expect(combined.parameters).toEqual([1, 'one', 'two', 3, 'c-1']);
  });

  it('returns the last statement unchanged when there is nothing before it', () => {
    expect(oneStatement([], update)).toBe(update);
  });

  it('refuses statements that cannot be nested as CTEs and names that are not identifiers', () => {
    const withClause = CompiledQuery.raw('with q as (select 1) insert into "a" select * from q', []);
    expect(() => oneStatement([withClause], update)).toThrow(/own WITH/);
    expect(() => oneStatement([{ name: 'bad name', query: insertA }], update)).toThrow(/invalid statement name/);
  });

  it('combines the same shapes again with new values into the same text, and other names or parts into another', () => {
    const first = oneStatement([insertA, { name: 'inserted', query: insertB }], update);
    const again = oneStatement(
      [CompiledQuery.raw(insertA.sql, [2, 'uno']), { name: 'inserted', query: CompiledQuery.raw(insertB.sql, ['dos']) }],
      CompiledQuery.raw(update.sql, [4, 'c-2']),
    );
    expect(again.sql).toBe(first.sql);
    expect(again.parameters).toEqual([2, 'uno', 'dos', 4, 'c-2']);
    // The same texts under other names, or a part moved, are other statements.
    expect(oneStatement([insertA, { name: 'added', query: insertB }], update).sql).toContain('added as (insert into "b" ("z") values ($3)');
    expect(oneStatement([insertB, insertA], update).sql).toBe('with s0 as (insert into "b" ("z") values ($1) returning "id"), s1 as (insert into "a" ("x", "y") values ($2, $3)) update "c" set "v" = $4 where "id" = $5');
    // A refused combination stays refused on every call.
    const withClause = CompiledQuery.raw('with q as (select 1) insert into "a" select * from q', []);
    expect(() => oneStatement([withClause], update)).toThrow(/own WITH/);
    expect(() => oneStatement([withClause], update)).toThrow(/own WITH/);
  });
});

describe('oneStatementOfMany', () => {
  const inserted = (id: string) => ({ name: 'inserted', query: CompiledQuery.raw('insert into "m" ("id") values ($1) on conflict do nothing returning "id"', [id]) });
  const counters = (scope: string) =>
    CompiledQuery.raw(`insert into "c" ("scope", "shard", "n") select $1::text, ${BACKEND_SHARD_SQL}, 1 from inserted on conflict ("scope", "shard") do update set "n" = "c"."n" + 1`, [scope]);
  const last = (id: string) => CompiledQuery.raw('update "t" set "state" = $1 where "id" = $2', ['done', id]);

  it('makes every statement of every group a CTE under its group\'s names, each group reading its own named rows', () => {
    const combined = oneStatementOfMany(
      [
        { before: [inserted('m1'), counters('all')], last: last('t1') },
        { before: [inserted('m2'), counters('all')], last: last('t2') },
      ],
      8,
    );
    expect(combined.sql).toBe(
      'with inserted_0 as (insert into "m" ("id") values ($1) on conflict do nothing returning "id"), ' +
        's1_0 as (insert into "c" ("scope", "shard", "n") select $2::text, ((pg_backend_pid() * 8 + 0) % 32), 1 from inserted_0 on conflict ("scope", "shard") do update set "n" = "c"."n" + 1), ' +
        's2_0 as (update "t" set "state" = $3 where "id" = $4), ' +
        'inserted_1 as (insert into "m" ("id") values ($5) on conflict do nothing returning "id"), ' +
        's1_1 as (insert into "c" ("scope", "shard", "n") select $6::text, ((pg_backend_pid() * 8 + 1) % 32), 1 from inserted_1 on conflict ("scope", "shard") do update set "n" = "c"."n" + 1), ' +
        's2_1 as (update "t" set "state" = $7 where "id" = $8) select 1',
    );
    expect(combined.parameters).toEqual(['m1', 'all', 'done', 't1', 'm2', 'all', 'done', 't2']);
  });

  it('gives the same groups\' texts the same statement whatever the values, and refuses more groups than the stride', () => {
    const groups = (a: string, b: string) => [
      { before: [inserted(a)], last: last(a) },
      { before: [inserted(b)], last: last(b) },
    ];
    // Equal values in both groups do not change the text (it never depends on values).
    expect(oneStatementOfMany(groups('x', 'x'), 4).sql).toBe(oneStatementOfMany(groups('y', 'z'), 4).sql);
    expect(() => oneStatementOfMany(groups('x', 'y'), 1)).toThrow(/stride/);
  });
});
