import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARK_EVERY, seekPage } from '../../../src/store/sql/notification-repository.js';
import { openTestPostgres, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { growEvents } from '../../helpers/grow-events.js';
import { nodesOf, type PlanNode } from '../../helpers/pg-plans.js';

/**
 * The events page's seek on PostgreSQL starts inside the page's second at the nearest of that second's marks (every
 * MARK_EVERY-th event, migration 0044), which the page writes the first time it needs them, and uses only while the
 * second's notification_buckets rows are the versions the marks were counted from. 6,000 events at ~1,430 a second,
 * each with a job, three details and a kept text; pages compared with the plain OFFSET walk.
 */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL events page, the marks inside a second', () => {
  let database: TestSqlDatabase;
  const env = 'env-marks';
  const ROWS = 6000;
  const before = '2030-01-01T00:00:00.000Z';

  beforeAll(async () => {
    database = await openTestPostgres();
    await growEvents(database.db, env, 1, ROWS);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  const truth = async (offset: number) => {
    const { rows } = await sql<{ id: string }>`select id from notifications where environment_id = ${env} and created_at < ${before}
      order by created_at desc, id desc limit 11 offset ${offset}`.execute(database.db);
    return rows.map((row) => row.id);
  };
  /** The page's ids, and the index entries its walk in notifications_env_created passed to the page (EXPLAIN ANALYZE). */
  const page = async (offset: number, withTexts: boolean) => {
    const query = seekPage({ environmentId: env, before, limit: 11, offset }, withTexts);
    const { rows } = await database.db.executeQuery(CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, query.parameters as unknown[]));
    const nodes = nodesOf(((rows[0] as any)['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
    const walked = Math.max(...nodes.filter((node) => node['Index Name'] === 'notifications_env_created').map((node) => node['Actual Rows']! * (node['Actual Loops'] ?? 1)));
    const ids = (await database.db.executeQuery(query)).rows.map((row) => row.id);
    return { ids, walked };
  };
  const marksOf = async (second: string) =>
    (await sql<{ print: string; created: string[] }>`select print, created from notification_second_marks where environment_id = ${env} and bucket = ${second}`.execute(database.db)).rows[0];
  const secondOf = async (offset: number) => (await truth(offset))[0] && (await sql<{ created_at: string }>`select created_at from notifications where id = ${(await truth(offset))[0]!}`.execute(database.db)).rows[0]!.created_at.slice(0, 19);

  it.each([[700], [2222], [3333], [5000]])('a page at offset %i is exact, and walks fewer than MARK_EVERY entries past the page once its second has marks', async (offset) => {
    for (const withTexts of [false, true]) {
      const first = await page(offset, withTexts);
      expect(first.ids).toEqual(await truth(offset));
      const second = await page(offset, withTexts);
      expect(second.ids).toEqual(await truth(offset));
      // Without the marks this walk passes the page's offset inside its second: hundreds of entries.
      expect(second.walked, `texts ${withTexts}`).toBeLessThan(MARK_EVERY + 11);
    }
    expect((await marksOf((await secondOf(offset))!))?.created.length).toBeGreaterThan(10);
  });

  it('a second written after its marks were made is paged exactly, and its marks are made again', async () => {
    const offset = 2600;
    await page(offset, true);
    const second = (await secondOf(offset))!;
    const made = await marksOf(second);
    expect(made).toBeDefined();
    const writes = [
      // A new event above the page in its second (the page moves down by one).
      sql`insert into notifications (id, environment_id, organization_id, subscriber_id, external_subscriber_id, transaction_id, document, created_at, updated_at)
        values ('ffff00000000000000000001', ${env}, 'org', 's', 'sub', 't-new', '{}', ${second + '.999'}, ${before})`,
      // An event of the second deleted (the newest of it).
      sql`delete from notifications where id = (select id from notifications where environment_id = ${env} and substr(created_at, 1, 19) = ${second}
        order by created_at desc, id desc limit 1 offset 1)`,
      // An event moved out of the second, to a later one.
      sql`update notifications set created_at = '2029-01-01T00:00:00.000Z' where id = (select id from notifications where environment_id = ${env}
        and substr(created_at, 1, 19) = ${second} order by created_at desc, id desc limit 1 offset 5)`,
      // An event's id changed (its place among events of the same created_at).
      sql`update notifications set id = 'ffff00000000000000000002' where id = (select id from notifications where environment_id = ${env}
        and substr(created_at, 1, 19) = ${second} order by created_at desc, id desc limit 1 offset 7)`,
    ];
    let print = made!.print;
    for (const write of writes) {
      await write.execute(database.db);
      for (const at of [offset, offset + 7, offset + 40]) {
        const read = await page(at, true);
        expect(read.ids, `${write.compile(database.db).sql.slice(0, 30)} at ${at}`).toEqual(await truth(at));
      }
      const again = await marksOf(second);
      expect(again!.print).not.toEqual(print);
      print = again!.print;
      expect((await page(offset, true)).walked).toBeLessThan(MARK_EVERY + 11);
    }
  });

  it('marks whose print does not match the second are not used', async () => {
    const offset = 4100;
    await page(offset, false);
    const second = (await secondOf(offset))!;
    // Marks pointing elsewhere, as a later write would leave them: never read while the print differs.
    await sql`update notification_second_marks set created = array_fill(${before}::text, array[cardinality(created)]), print = 'stale'
      where environment_id = ${env} and bucket = ${second}`.execute(database.db);
    expect((await page(offset, false)).ids).toEqual(await truth(offset));
    expect((await marksOf(second))!.print).not.toEqual('stale');
    expect((await page(offset, false)).ids).toEqual(await truth(offset));
  });
});
