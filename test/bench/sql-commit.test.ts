import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the bench (preloaded by round-trip-counter.mjs), without types
import { autocommitsWrite } from '../../bench/lib/sql-commit.mjs';
import { firstTextPage, seekPage } from '../../src/store/sql/notification-repository.js';

describe('autocommitsWrite (bench:scaling counts the PostgreSQL commits that wait for a WAL flush)', () => {
  it('counts plain writes and WITH statements that write', () => {
    expect(autocommitsWrite('insert into "jobs" ("id") values ($1)')).toBe(true);
    expect(autocommitsWrite('  UPDATE "jobs" set "status" = $1 where "id" = $2')).toBe(true);
    expect(autocommitsWrite('delete from notification_texts where notification_id = $1')).toBe(true);
    expect(autocommitsWrite('with held as (insert into "messages" ("id") values ($1) returning 1) select count(*) from held')).toBe(true);
    expect(autocommitsWrite('with moved as (update "jobs" as j set status = $1 where j.id = $2 returning j.id) select * from moved')).toBe(true);
    expect(autocommitsWrite('with gone as (delete from "jobs" where id = $1 returning id) select 1')).toBe(true);
  });

  it("does not count reads, the events list's CTE pages among them (a column named updated_at is no write)", () => {
    expect(autocommitsWrite('select * from "subscribers" where "id" = $1')).toBe(false);
    expect(autocommitsWrite('with page as (select id, updated_at from notifications order by updated_at desc limit 10) select * from page')).toBe(false);
    const before = new Date().toISOString();
    expect(autocommitsWrite(firstTextPage({ environmentId: 'e', before, limit: 11, offset: 0 }).sql)).toBe(false);
    expect(autocommitsWrite(seekPage({ environmentId: 'e', before, limit: 11, offset: 500 }, true).sql)).toBe(false);
  });
});
