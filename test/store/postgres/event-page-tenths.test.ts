import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { migrateToLatest, migratorFor } from '../../../src/store/sql/migrate.js';
import { migrationProvider } from '../../../src/store/sql/migrations.js';
import { seekPage } from '../../../src/store/sql/notification-repository.js';
import { openTestPostgres, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { eventRow, eventTime } from '../../helpers/migration-events.js';
import { nodesOf, type PlanNode } from '../../helpers/pg-plans.js';

const available = await servicesAvailable(['PostgreSQL']);

/** Every tenth's count as the buckets' `tenths` add up to, and as the events say, `environment second.d count` (non-zero). */
async function tenthCounts(database: TestSqlDatabase): Promise<{ kept: string[]; events: string[] }> {
  const kept = await sql<{ line: string }>`
    select environment_id || ' ' || bucket || '.' || (place - 1) || ' ' || sum(c) as line
    from notification_buckets, unnest(tenths) with ordinality counts(c, place)
    group by environment_id, bucket, place having sum(c) <> 0`.execute(database.db);
  const events = await sql<{ line: string }>`
    select environment_id || ' ' || substr(created_at, 1, 21) || ' ' || count(*) as line from notifications
    where substr(created_at, 20, 1) = '.' and substr(created_at, 21, 1) between '0' and '9'
    group by environment_id, substr(created_at, 1, 21)`.execute(database.db);
  return { kept: kept.rows.map((row) => row.line).sort(), events: events.rows.map((row) => row.line).sort() };
}

/** The page as an OFFSET walk of the index reads it: what seekPage must answer. */
async function walkedPage(database: TestSqlDatabase, env: string, before: string, limit: number, offset: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select id from notifications where environment_id = ${env} and created_at < ${before}
    order by created_at desc, id desc limit ${limit} offset ${offset}`.execute(database.db);
  return rows.map((row) => row.id);
}

async function soughtPage(database: TestSqlDatabase, env: string, before: string, limit: number, offset: number, withTexts: boolean): Promise<string[]> {
  const { rows } = await database.db.executeQuery(seekPage({ environmentId: env, before, limit, offset }, withTexts));
  return rows.map((row) => row.id);
}

/**
 * The scaled-out events page finds the tenth of a second its page starts in (migration 0040: `tenths` on each shard
 * row of notification_buckets), so it walks at most that tenth's index entries, not the second's (a heap visit each on
 * a table never vacuumed). 15,000 events at ~1,430 a second, inserted in one statement, never vacuumed nor analysed.
 */
describe.skipIf(!available)('PostgreSQL deep events page, the tenths of its second', () => {
  let database: TestSqlDatabase;
  const env = 'env-tenths';
  const ROWS = 15_000;

  beforeAll(async () => {
    database = await openTestPostgres();
    await sql`insert into notifications (id, environment_id, organization_id, subscriber_id, external_subscriber_id, transaction_id, document, created_at, updated_at)
      select lpad(to_hex(i), 24, '0'), ${env}, 'org', 's', 'sub', 't' || i, '{}',
        to_char(timestamp '2026-11-26 10:00:00' + i * interval '0.7 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '2026-11-26T10:00:00.000Z'
      from generate_series(1, ${ROWS}) i`.execute(database.db);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  it.each([[500], [2222], [5000], [12000]])('a page at offset %i walks about a tenth of a second of events', async (offset) => {
    for (const withTexts of [false, true]) {
      const query = seekPage({ environmentId: env, before: '2030-01-01T00:00:00.000Z', limit: 11, offset }, withTexts);
      const { rows } = await database.db.executeQuery(CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, query.parameters as unknown[]));
      const nodes = nodesOf(((rows[0] as any)['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
      const walked = nodes.filter((node) => node['Relation Name'] === 'notifications' && node['Node Type'] !== 'Index Scan');
      expect(walked.length).toBeGreaterThan(0);
      // A tenth holds ~143 events here, a second ~1,430: the page may start near a tenth's end and run into the next.
      for (const node of walked) expect(node['Actual Rows']! * (node['Actual Loops'] ?? 1), `${node['Node Type']} ${withTexts}`).toBeLessThanOrEqual(2 * 143 + 11);
      const want = Array.from({ length: 11 }, (_, i) => ROWS - offset - i).filter((i) => i > 0).map((i) => i.toString(16).padStart(24, '0'));
      expect(await soughtPage(database, env, '2030-01-01T00:00:00.000Z', 11, offset, withTexts)).toEqual(want);
    }
  });
});

/**
 * The tenths follow every write (inserts, deletes, moves, created_at without a fraction), and a page answers what the
 * index walk answers whether it reads by the tenths or, where they do not add up to the second's count, by the second.
 */
describe.skipIf(!available)('PostgreSQL notification_buckets tenths under writes', () => {
  let database: TestSqlDatabase;
  const env = newId();
  const other = newId();
  const before = '2030-01-01T00:00:00.000Z';

  beforeAll(async () => {
    database = await openTestPostgres();
    // 6 seconds of events, 40 a second spread unevenly over the tenths, in two environments.
    const rows = [];
    for (let second = 0; second < 6; second++) {
      for (let i = 0; i < 40; i++) rows.push(eventRow(i % 5 === 0 ? other : env, eventTime(second, (i * i * 7) % 1000)));
    }
    await database.db.insertInto('notifications').values(rows).execute();
  });
  afterAll(async () => database?.close());

  async function expectPagesAsWalked(): Promise<void> {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from notifications where environment_id = ${env}`.execute(database.db);
    for (let offset = 1; offset <= rows[0]!.n; offset += 3) {
      for (const limit of [11, 4]) {
        const walked = await walkedPage(database, env, before, limit, offset);
        expect(await soughtPage(database, env, before, limit, offset, true), `offset ${offset} limit ${limit}`).toEqual(walked);
        expect(await soughtPage(database, env, before, limit, offset, false), `offset ${offset} limit ${limit}`).toEqual(walked);
      }
    }
  }

  it('counts each tenth on insert, and pages read by them answer as the index walk', async () => {
    const counts = await tenthCounts(database);
    expect(counts.kept).toEqual(counts.events);
    expect(counts.kept.length).toBeGreaterThan(20);
    await expectPagesAsWalked();
  });

  it('follows deletes and moves across tenths and seconds', async () => {
    const ids = (await sql<{ id: string }>`select id from notifications where environment_id = ${env} order by created_at, id`.execute(database.db)).rows.map((row) => row.id);
    // Deleted from several connections' rows: a delete takes the lowest shard row of its second.
    await database.db.deleteFrom('notifications').where('id', 'in', ids.filter((_, i) => i % 4 === 1)).execute();
    await database.db.updateTable('notifications').set({ created_at: eventTime(2, 555) }).where('id', 'in', ids.filter((_, i) => i % 9 === 2)).execute();
    await database.db.updateTable('notifications').set({ environment_id: other }).where('id', '=', ids[3]!).execute();
    const counts = await tenthCounts(database);
    expect(counts.kept).toEqual(counts.events);
    await expectPagesAsWalked();
  });

  it('pages by the second where an event of it has no tenth (created_at without a fraction)', async () => {
    await database.db.insertInto('notifications').values([eventRow(env, '2026-03-01T10:00:03Z'), eventRow(env, '2026-03-01T10:00:04Z')]).execute();
    const counts = await tenthCounts(database);
    expect(counts.kept).toEqual(counts.events);
    await expectPagesAsWalked();
  });

  it('forgets a second once its events are all deleted', async () => {
    await database.db.deleteFrom('notifications').where('created_at', '<', eventTime(2, 0)).execute();
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from notification_buckets where bucket < ${eventTime(2, 0).slice(0, 19)}`.execute(database.db);
    expect(rows[0]!.n).toBe(0);
    const counts = await tenthCounts(database);
    expect(counts.kept).toEqual(counts.events);
    await expectPagesAsWalked();
  });
});

/** Events stored before 0040 are counted per tenth by the migration; the counts then follow later writes. */
describe.skipIf(!available)('PostgreSQL migration 0040, tenths of the events already stored', () => {
  let database: TestSqlDatabase;
  const env = newId();

  beforeAll(async () => {
    database = await openTestPostgres({ migrate: false });
    const before0040 = { getMigrations: async () => Object.fromEntries(Object.entries(await migrationProvider.getMigrations()).filter(([name]) => name < '0040')) };
    const { error } = await (await migratorFor(database.db, 'postgres', before0040)).migrateToLatest();
    if (error) throw error;
    const rows = [];
    for (let i = 0; i < 90; i++) rows.push(eventRow(env, eventTime(Math.floor(i / 30), (i * 37) % 1000)));
    rows.push(eventRow(env, '2026-03-01T10:00:01Z'));
    await database.db.insertInto('notifications').values(rows).execute();
    await migrateToLatest(database.db, 'postgres');
  });
  afterAll(async () => database?.close());

  it('counts them, and pages answer as the index walk', async () => {
    const counts = await tenthCounts(database);
    expect(counts.kept).toEqual(counts.events);
    expect(counts.kept.length).toBeGreaterThan(10);
    await database.db.insertInto('notifications').values([eventRow(env, eventTime(0, 5)), eventRow(env, eventTime(2, 905))]).execute();
    await database.db.deleteFrom('notifications').where('created_at', '=', eventTime(1, (40 * 37) % 1000)).execute();
    const after = await tenthCounts(database);
    expect(after.kept).toEqual(after.events);
    for (let offset = 1; offset < 95; offset += 2) {
      expect(await soughtPage(database, env, '2030-01-01T00:00:00.000Z', 11, offset, true)).toEqual(await walkedPage(database, env, '2030-01-01T00:00:00.000Z', 11, offset));
    }
  });
});
