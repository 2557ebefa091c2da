import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstTextPage, seekPage } from '../../../src/store/sql/notification-repository.js';
import { openTestPostgres, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { nodesOf, type PlanNode } from '../../helpers/pg-plans.js';

/**
 * A kept text written by the transaction that wrote its new event, jobs and details (the held first step) is used by
 * the events page without reading the print of the jobs and details (migration 0044), and any later write to a job or
 * a detail of the event, by any transaction, forgets it: the page then assembles the event. Texts kept by another
 * transaction keep their print check.
 */
describe.skipIf(!(await servicesAvailable(['PostgreSQL'])))('PostgreSQL kept texts written with their event', () => {
  let database: TestSqlDatabase;
  const env = 'env-own-texts';
  const before = '2030-01-01T00:00:00.000Z';
  const id = (i: number) => i.toString(16).padStart(24, '0');

  /** Event i with a job, three details and its kept text, all in one statement (one transaction), as the held write. */
  const writeEvent = (i: number) => sql`with
    e as (insert into notifications (id, environment_id, organization_id, subscriber_id, external_subscriber_id, transaction_id, document, created_at, updated_at)
      values (${id(i)}, ${env}, 'org', 's', 'sub', ${'t' + i}, '{}', ${`2026-11-26T10:00:00.${String(i).padStart(3, '0')}Z`}, ${before}) returning id),
    j as (insert into jobs (id, environment_id, organization_id, notification_id, subscriber_id, transaction_id, template_id, step_index, type, status, provider_id, document, created_at, updated_at)
      values (${'j' + id(i)}, ${env}, 'org', ${id(i)}, 's', ${'t' + i}, null, 0, 'in_app', 'completed', 'p', '{}', ${before}, ${before}) returning id),
    d as (insert into execution_details (id, environment_id, job_id, notification_id, status, detail, is_retry, is_test, provider_id, raw, source, created_at)
      select 'd' || k || ${id(i)}, ${env}, ${'j' + id(i)}, ${id(i)}, 'Success', 'x', 0, 0, null, null, 'Internal', ${before} from generate_series(1, 3) k returning id)
    insert into notification_texts (notification_id, environment_id, text, print)
      values (${id(i)}, ${env}, ${`{"kept":${i}}`}, replace('x/x/x,x,x', 'x', pg_current_xact_id()::xid::text))`;

  beforeAll(async () => {
    database = await openTestPostgres();
    for (let i = 1; i <= 40; i++) await writeEvent(i).execute(database.db);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  const read = async (query: CompiledQuery<unknown>) => {
    const { rows } = await database.db.executeQuery(CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, query.parameters as unknown[]));
    const nodes = nodesOf(((rows[0] as any)['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
    const printReads = nodes.filter((node) => node['Relation Name'] === 'jobs' || node['Relation Name'] === 'execution_details');
    const page = (await database.db.executeQuery(query)).rows as Array<{ id: string; kept_text: string | null }>;
    return { page, printLoops: printReads.reduce((sum, node) => sum + (node['Actual Loops'] ?? 0), 0) };
  };
  const first = () => firstTextPage({ environmentId: env, before, limit: 11, offset: 0 });
  const deep = () => seekPage({ environmentId: env, before, limit: 11, offset: 12 }, true);
  const texts = async () => (await sql<{ n: string }>`select count(*) as n from notification_texts where environment_id = ${env}`.execute(database.db)).rows[0]!.n;

  it('uses the texts without reading their jobs and details, on the first page and through the seek', async () => {
    expect(await texts()).toBe('40');
    for (const query of [first(), deep()]) {
      const { page, printLoops } = await read(query);
      expect(page).toHaveLength(11);
      for (const row of page) expect(row.kept_text).toBe(`{"kept":${parseInt(row.id, 16)}}`);
      expect(printLoops).toBe(0);
    }
  });

  it('forgets the text on a later write to a job or a detail of the event; the page assembles it', async () => {
    const writes: Array<[number, ReturnType<typeof sql>]> = [
      [40, sql`insert into execution_details (id, environment_id, job_id, notification_id, status, detail, is_retry, is_test, provider_id, raw, source, created_at)
        values ('late', ${env}, ${'j' + id(40)}, ${id(40)}, 'Success', 'late', 0, 0, null, null, 'Internal', ${before})`],
      [39, sql`update jobs set status = status where notification_id = ${id(39)}`],
      [38, sql`delete from execution_details where id = ${'d2' + id(38)}`],
      [37, sql`update execution_details set detail = 'y' where id = ${'d1' + id(37)}`],
      [36, sql`insert into jobs (id, environment_id, organization_id, notification_id, subscriber_id, transaction_id, template_id, step_index, type, status, provider_id, document, created_at, updated_at)
        values ('j2', ${env}, 'org', ${id(36)}, 's', 't36', null, 1, 'in_app', 'pending', 'p', '{}', ${before}, ${before})`],
    ];
    for (const [event, write] of writes) {
      await write.execute(database.db);
      const { page } = await read(first());
      const row = page.find((r) => r.id === id(event))!;
      expect(row.kept_text, `event ${event}`).toBeNull();
      // The others are still used as they are.
      expect(page.filter((r) => r.kept_text !== null)).toHaveLength(11 - (41 - event));
    }
    expect(await texts()).toBe('35');
  });

  it('keeps a text its own transaction wrote with the rows, and a text kept by another transaction is checked by its print', async () => {
    await database.db.transaction().execute(async (trx) => {
      await writeEvent(41).execute(trx);
      await sql`update jobs set status = 'completed' where notification_id = ${id(41)}`.execute(trx);
    });
    expect((await read(first())).page[0]).toEqual(expect.objectContaining({ id: id(41), kept_text: '{"kept":41}' }));
    // Another transaction keeps a text with a print that no longer matches the rows: never used.
    await sql`update notification_texts set print = '1/2/3' where notification_id = ${id(20)}`.execute(database.db);
    const { page, printLoops } = await read(seekPage({ environmentId: env, before, limit: 11, offset: 18 }, true));
    expect(page.find((r) => r.id === id(20))!.kept_text).toBeNull();
    expect(printLoops).toBeGreaterThan(0);
  });
});
