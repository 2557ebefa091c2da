import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/sql/schema.js';
import { migrateToLatest } from '../../../src/store/sql/migrate.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { BACKEND_SHARDS } from '../../../src/store/sql/backend-shard.js';
import { stepOutcomeStatementsFromMoved } from '../../../src/store/sql/overview-repository.js';
import { buildMessage, createScope, insertSubscriber } from '../../helpers/factories.js';
import { createTestSchema, servicesAvailable, type TestSchema } from '../../helpers/databases.js';

/**
 * PostgreSQL: the hot counter rows a delivery writes (message_counters' environment-wide scopes, overview_counts,
 * overview_latency, notification_buckets) carry the writing connection's shard (its backend's process id modulo
 * BACKEND_SHARDS), so writes running at once on different connections do not wait on each other's row locks
 * (BENCHMARKS.md session 19). The counts stay exact: readers sum every shard, rows written with the older hash shards
 * included, and a removed event is taken off a row of its second that still counts one.
 */
const available = await servicesAvailable(['PostgreSQL']);

describe.skipIf(!available)('PostgreSQL counter rows on the connection shard', () => {
  let schema: TestSchema;
  const pools: pg.Pool[] = [];
  const dbs: Kysely<Database>[] = [];
  const stores: SqlStore[] = [];
  const shards: number[] = [];

  beforeAll(async () => {
    schema = await createTestSchema();
    // Two stores of one connection each: each store's writes run on its own backend.
    for (let i = 0; i < 2; i++) {
      const pool = new pg.Pool({ connectionString: schema.url, max: 1, idleTimeoutMillis: 0 });
      const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
      if (i === 0) await migrateToLatest(db, 'postgres');
      pools.push(pool);
      dbs.push(db);
      stores.push(new SqlStore(db, { dialect: 'postgres', secretBox: new SecretBox(randomBytes(32)) }));
      shards.push((await sql<{ shard: number }>`select pg_backend_pid() % ${sql.lit(BACKEND_SHARDS)} as shard`.execute(db)).rows[0]!.shard);
    }
  }, 60_000);

  afterAll(async () => {
    for (const db of dbs) await db.destroy();
    await schema?.drop();
  });

  it('a new message counts in its connection shard for the environment-wide scopes, in its hash shard for its subscriber', async () => {
    const scope = await createScope(stores[0]!);
    const subscriber = await insertSubscriber(stores[0]!, scope, { subscriberId: 'shard-probe' });
    // A row of the older hash shards, as counted before: it stays in the sums.
    await sql`insert into message_counters (environment_id, scope, shard, count) values (${scope.environmentId}, 'all', 3, 5)`.execute(dbs[0]!);
    for (const store of stores) await store.messages.create(buildMessage(subscriber, { channel: 'in_app' }));
    const rows = await dbs[0]!.selectFrom('message_counters').select(['scope', 'shard', 'count']).where('environment_id', '=', scope.environmentId).execute();
    for (const [index, shard] of shards.entries()) {
      for (const counted of ['all', 'channel:in_app']) {
        expect(rows.some((row) => row.scope === counted && row.shard === shard), `${counted} on connection ${index}'s shard ${shard}`).toBe(true);
      }
    }
    const subscriberRows = rows.filter((row) => row.scope === 'subscriber:shard-probe');
    expect(subscriberRows.every((row) => row.shard >= 0 && row.shard < 8)).toBe(true);
    const totalOf = async (filter: object) => (await stores[1]!.messages.list(scope.environmentId, { page: 0, limit: 1, ...filter })).totalCount;
    expect(await totalOf({})).toBe(7);
    expect(await totalOf({ channel: 'in_app' })).toBe(2);
    expect(await totalOf({ subscriberId: 'shard-probe' })).toBe(2);
  });

  it('a step that ends adds to its connection shard of the overview, summed with older rows when read', async () => {
    const environmentId = 'env-overview-shards';
    const endedAt = '2026-11-27T04:10:00.000Z';
    await sql`insert into overview_counts (environment_id, hour, channel, provider_id, workflow_id, outcome, shard, count)
      values (${environmentId}, '2026-11-27T04', 'in_app', '', 'wf', 'sent', 6, 4)`.execute(dbs[0]!);
    for (const [index, db] of dbs.entries()) {
      for (const statement of stepOutcomeStatementsFromMoved(
        { jobId: `job-${index}`, environmentId, channel: 'in_app', providerId: '', workflowId: 'wf', outcome: 'sent', createdAt: '2026-11-27T04:09:59.000Z', endedAt },
        '',
      )) {
        await db.executeQuery(statement);
      }
    }
    const counts = await dbs[0]!.selectFrom('overview_counts').select(['shard', 'count']).where('environment_id', '=', environmentId).execute();
    const latency = await dbs[0]!.selectFrom('overview_latency').select(['shard', 'count']).where('environment_id', '=', environmentId).execute();
    for (const shard of shards) {
      expect(counts.some((row) => row.shard === shard)).toBe(true);
      expect(latency.some((row) => row.shard === shard)).toBe(true);
    }
    const read = await stores[0]!.overview.read(environmentId, { fromHour: '2026-11-27T00', toHour: '2026-11-28T00', bucket: 'hour' });
    expect(read.totals).toEqual([{ channel: 'in_app', providerId: '', workflowId: 'wf', outcome: 'sent', count: 6 }]);
    expect(read.latency.reduce((sum, row) => sum + row.count, 0)).toBe(2);
  });

  it('events count in their connection row of the second, and removed events leave the seconds exact with no empty row', async () => {
    const environmentId = 'env-bucket-shards';
    const second = '2026-11-27T04:20:00';
    const insertEvents = (db: Kysely<Database>, ids: string[]) =>
      sql`insert into notifications (id, environment_id, organization_id, subscriber_id, external_subscriber_id, transaction_id, document, created_at, updated_at)
        select id, ${environmentId}, 'org', 's', 'sub', 'tx-' || id, '{}', ${second} || '.' || lpad((row_number() over ())::text, 3, '0') || 'Z', ${second} || '.000Z'
        from unnest(${ids}::text[]) as ids(id)`.execute(db);
    const buckets = () =>
      dbs[0]!.selectFrom('notification_buckets').select(['shard', 'n']).where('environment_id', '=', environmentId).where('bucket', '=', second).orderBy('shard').execute();
    // An event counted before 0034 (a hash shard; 40 is no connection's): its row stays in the second's sum.
    await insertEvents(dbs[0]!, ['o1']);
    await sql`update notification_buckets set shard = 40 where environment_id = ${environmentId}`.execute(dbs[0]!);
    await insertEvents(dbs[0]!, ['a1', 'a2']);
    await insertEvents(dbs[1]!, ['b1', 'b2', 'b3']);
    const expected = new Map<number, number>([[40, 1]]);
    expected.set(shards[0]!, 2);
    expected.set(shards[1]!, (expected.get(shards[1]!) ?? 0) + 3);
    expect((await buckets()).map((row) => [row.shard, Number(row.n)])).toEqual([...expected].sort((a, b) => a[0] - b[0]));
    for (const [removed, left] of [[['b1'], 5], [['a1', 'b2'], 3], [['o1'], 2], [['a2'], 1], [['b3'], 0]] as const) {
      await sql`delete from notifications where id = any(${removed as unknown as string[]}::text[])`.execute(dbs[0]!);
      const rows = await buckets();
      expect(rows.reduce((sum, row) => sum + Number(row.n), 0)).toBe(left);
      expect(rows.every((row) => Number(row.n) > 0)).toBe(true);
    }
  });
});
