import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/sql/schema.js';
import { migrateToLatest } from '../../../src/store/sql/migrate.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { createTestSchema, servicesAvailable, type TestSchema } from '../../helpers/databases.js';
import { nodesOf, type PlanNode } from '../../helpers/pg-plans.js';

/**
 * The list pages of GET /v1/notifications and GET /v1/messages on PostgreSQL (issue 24): EXPLAIN of the statements
 * the repositories really send, over tables large enough (20,000 rows each, vacuumed and analysed, as autovacuum
 * leaves a table) that the planner's choice matters. A page is read in the order of an index, never by a sequential
 * scan of the table followed by a sort of all its rows; a deep event page walks the ids in the index alone.
 */
const available = await servicesAvailable(['PostgreSQL']);
const ROWS = 20_000;
const ENV = 'env-plans';

describe.skipIf(!available)('PostgreSQL plans of the list pages', () => {
  let schema: TestSchema;
  let pool: pg.Pool;
  let db: Kysely<Database>;
  let store: SqlStore;
  const sent: CompiledQuery[] = [];

  beforeAll(async () => {
    schema = await createTestSchema();
    pool = new pg.Pool({ connectionString: schema.url, max: 2 });
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === 'query') sent.push(event.query);
      },
    });
    await migrateToLatest(db, 'postgres');
    store = new SqlStore(db, { dialect: 'postgres', secretBox: new SecretBox(randomBytes(32)) });
    const document = JSON.stringify({ payload: { text: 'x'.repeat(600) } });
    await sql`insert into notifications (id, environment_id, organization_id, subscriber_id, external_subscriber_id, transaction_id, document, created_at, updated_at)
      select 'n' || lpad(i::text, 8, '0'), ${ENV}, 'org', 's' || (i % 300), 'sub-' || (i % 300), 't' || i, ${document},
             to_char(timestamp '2026-11-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             to_char(timestamp '2026-11-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      from generate_series(1, ${ROWS}) as i`.execute(db);
    await sql`insert into messages (id, environment_id, organization_id, notification_id, subscriber_id, external_subscriber_id, transaction_id, channel, read, seen, status, context_keys_norm, deleted, document, created_at, updated_at)
      select 'm' || lpad(i::text, 8, '0'), ${ENV}, 'org', 'n' || lpad(i::text, 8, '0'), 's' || (i % 300), 'sub-' || (i % 300), 't' || i,
             'in_app', 0, 0, 'sent', '', 0, ${document},
             to_char(timestamp '2026-11-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             to_char(timestamp '2026-11-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      from generate_series(1, ${ROWS}) as i`.execute(db);
    await sql`vacuum analyze notifications`.execute(db);
    await sql`vacuum analyze messages`.execute(db);
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await schema?.drop();
  });

  /** The root plan node of EXPLAIN (FORMAT JSON) of a statement the repository sent. */
  async function planOf(query: CompiledQuery): Promise<PlanNode> {
    const { rows } = await pool.query(`explain (format json) ${query.sql}`, query.parameters as unknown[]);
    return (rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
  }

  async function statementsOf(read: () => Promise<unknown>): Promise<CompiledQuery[]> {
    sent.length = 0;
    await read();
    return [...sent];
  }

  /** No node reads a list table sequentially, and no sort is over more rows than a page (plus one). */
  function expectIndexOrder(plan: PlanNode, limit: number) {
    const nodes = nodesOf(plan);
    expect(nodes.filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name'])).toEqual([]);
    for (const node of nodes.filter((n) => n['Node Type'] === 'Sort')) expect(node['Plan Rows']).toBeLessThanOrEqual(limit + 1);
  }

  it.each([0, 1000, 1990])('an event page (page %i of 10) walks the ids in notifications_env_created, then reads the page by key', async (page) => {
    const [statement] = await statementsOf(() => store.notifications.list(ENV, { page, limit: 10, before: '2030-01-01T00:00:00.000Z' }));
    const plan = await planOf(statement!);
    expectIndexOrder(plan, 10);
    const nodes = nodesOf(plan);
    const walk = nodes.find((node) => node['Index Name'] === 'notifications_env_created');
    expect(walk?.['Node Type']).toBe('Index Only Scan');
    expect(nodes.some((node) => node['Index Name'] === 'notifications_pkey')).toBe(true);
  });

  it('the event page returns the right rows (page 1000 of 10: the 10,001st to 10,010th newest)', async () => {
    const result = await store.notifications.list(ENV, { page: 1000, limit: 10, before: '2030-01-01T00:00:00.000Z' });
    expect(result.data.map((event) => event._id)).toEqual(Array.from({ length: 10 }, (_, i) => `n${String(ROWS - 10_000 - i).padStart(8, '0')}`));
    expect(result.hasMore).toBe(true);
  });

  it.each([
    [
      'over busy seconds skips them by their counts: it reads one second of the index, not the offset',
      // 20,000 events over 20 seconds (1,000 a second). Page 1000; and pages 1 and 50, which walked with OFFSET until
      // session 14: without statistics for these rows PostgreSQL read all 20,000 with a bitmap scan and sorted them for
      // every page past the first couple. The previous statement walked 10,011 index entries at page 1000; the page
      // now starts in its second.
      { environmentId: 'env-plans-busy', prefix: 'b', start: '2026-11-02', every: '1 millisecond', pages: [1, 50, 1000], maxWalked: 1000 + 11 },
    ],
    [
      'past 16 seconds of events reads their counts, not the offset',
      // 300 a second over 70 seconds, as bench:http's events (written as the worker takes their triggers): page 1,500
      // lies ~50 seconds deep. With the counts of only 16 seconds read, the page walked the rest of its offset in the
      // index (~10,000 entries).
      { environmentId: 'env-plans-spread', prefix: 'c', start: '2026-11-03', every: '3.333 millisecond', pages: [1500, 1990], maxWalked: 2 * 300 + 11 },
    ],
  ] as const)('a deep event page %s (not vacuumed)', async (_name, { environmentId, prefix, start, every, pages, maxWalked }) => {
    // Written after the vacuum: no visibility map and no statistics for these rows, the state of a table just filled
    // where autovacuum has not run (or is off).
    await sql`insert into notifications (id, environment_id, organization_id, subscriber_id, external_subscriber_id, transaction_id, document, created_at, updated_at)
      select ${prefix} || lpad(i::text, 8, '0'), ${environmentId}, 'org', 's', 'sub', 't' || i, '{}',
             to_char(${start}::timestamp + i * ${every}::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             to_char(${start}::timestamp + i * ${every}::interval, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      from generate_series(1, ${ROWS}) as i`.execute(db);
    for (const pageNumber of pages) {
      const [statement] = await statementsOf(() => store.notifications.list(environmentId, { page: pageNumber, limit: 10, before: '2030-01-01T00:00:00.000Z' }));
      const { rows } = await pool.query(`explain (analyze, format json) ${statement!.sql}`, statement!.parameters as unknown[]);
      const nodes = nodesOf((rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
      expect(nodes.filter((node) => node['Node Type'] === 'Seq Scan').map((node) => node['Relation Name'])).toEqual([]);
      const walked = nodes.filter((node) => node['Index Name'] === 'notifications_env_created');
      expect(walked.length).toBeGreaterThan(0);
      for (const node of walked) expect(node['Actual Rows']! * (node['Actual Loops'] ?? 1), `page ${pageNumber}`).toBeLessThanOrEqual(maxWalked);
      for (const node of nodes.filter((n) => n['Node Type'] === 'Sort')) expect(node['Actual Rows']).toBeLessThanOrEqual(16);
      expect(nodes.some((node) => node['Relation Name'] === 'notification_buckets' && node['Node Type'].startsWith('Index'))).toBe(true);
      const page = await store.notifications.list(environmentId, { page: pageNumber, limit: 10, before: '2030-01-01T00:00:00.000Z' });
      const first = ROWS - pageNumber * 10;
      expect(page.data.map((event) => event._id)).toEqual(Array.from({ length: 10 }, (_, i) => `${prefix}${String(first - i).padStart(8, '0')}`));
    }
  });

  it.each([
    ['unfiltered, page 1000', { page: 1000, limit: 10 }],
    ['one subscriber, page 1', { subscriberId: 'sub-7', page: 1, limit: 10 }],
    ['one channel, page 500', { channel: 'in_app' as const, page: 500, limit: 10 }],
  ])('a message page (%s) is read in index order', async (_name, filter) => {
    const [statement] = await statementsOf(() => store.messages.list(ENV, filter));
    const plan = await planOf(statement!);
    expectIndexOrder(plan, 10);
    expect(nodesOf(plan).some((node) => node['Node Type'].startsWith('Index'))).toBe(true);
  });

  // Migration 0038: the context indexes hold rows with context keys only, the events' email index events with an
  // email only (none of the rows above has either). A filter must still read them, in index order.
  it.each([
    ['a message page filtered by context keys', () => store.messages.list(ENV, { contextKeys: ['tenant:a'], page: 0, limit: 10 }), 'messages_env_context_list'],
    ['an event page filtered by context keys', () => store.notifications.list(ENV, { contextKeys: ['tenant:a'], page: 0, limit: 10 }), 'notifications_env_context_list'],
    ['an event page filtered by an email', () => store.notifications.list(ENV, { emails: ['ada@example.com'], page: 0, limit: 10 }), 'notifications_env_email_list'],
  ])('%s reads the partial index %s', async (_name, read, index) => {
    const statements = (await statementsOf(read)).filter((query) => /order by/i.test(query.sql));
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      const plan = await planOf(statement);
      expectIndexOrder(plan, 10);
      expect(nodesOf(plan).some((node) => node['Index Name'] === index)).toBe(true);
    }
  });
});
