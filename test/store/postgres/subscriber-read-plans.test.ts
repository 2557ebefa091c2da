import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/sql/schema.js';
import { migrateToLatest } from '../../../src/store/sql/migrate.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { createTestSchema, servicesAvailable, type TestSchema } from '../../helpers/databases.js';
import { genericPlanOf, type PlanNode } from '../../helpers/pg-plans.js';

/**
 * The generic plans of the reads of a subscriber by subscriberId, one key and a batch of keys (the scaled-out worker's
 * jobs each resolve their recipient; issue 24, sessions 19-20). A prepared statement settles on its generic plan after
 * five runs and keeps it, so the plan made at whatever size the table had then must find each row by the unique index.
 * Without statistics (autovacuum off here) the unique index tied with subscribers_env_email (environment_id, email),
 * whose entries are smaller, from about 300 to 1,000 rows, and PostgreSQL took that one: every subscriber of the
 * environment walked per key. Migration 0037 dropped it. The rows below have the benchmark's shapes of ids and emails
 * (none), the table grown step by step and never analysed.
 */
const available = await servicesAvailable(['PostgreSQL']);
const ENV = '692797d1a0b1c2d3e4f5a6b7';
const SIZES = [3, 300, 600, 1000, 2000, 5000];

describe.skipIf(!available)('PostgreSQL generic plans of the subscriber reads by subscriberId', () => {
  let schema: TestSchema;
  let pool: pg.Pool;
  let db: Kysely<Database>;
  let store: SqlStore;
  let sent: CompiledQuery[] = [];

  beforeAll(async () => {
    schema = await createTestSchema();
    pool = new pg.Pool({ connectionString: schema.url, max: 1 });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (event) => void (event.level === 'query' && sent.push(event.query)) });
    await migrateToLatest(db, 'postgres');
    store = new SqlStore(db, { dialect: 'postgres', secretBox: new SecretBox(randomBytes(32)) });
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await schema?.drop();
  });

  const scans = (nodes: PlanNode[]) => nodes.filter((node) => node['Relation Name'] !== undefined).map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`.trim());
  /** Array parameters as array literals, which genericPlanOf passes as text. */
  const withArrayLiterals = (query: CompiledQuery): CompiledQuery => ({
    ...query,
    parameters: query.parameters.map((value) => (Array.isArray(value) ? `{${value.map((item) => JSON.stringify(String(item))).join(',')}}` : value)),
  });
  const subscriberId = (i: number) => `bench-mih2k1x-${i}`;

  it('finds one subscriber, and a batch of them, by the unique index at every size the table passes through', async () => {
    let rows = 0;
    for (const size of SIZES) {
      await sql`insert into subscribers (id, environment_id, organization_id, subscriber_id, data, channels, topics, created_at, updated_at)
        select '692797d1' || lpad(to_hex(i), 16, '0'), ${ENV}, 'org', 'bench-mih2k1x-' || i, '{}', '[]', '[]', '2026-11-27T07:00:00.000Z', '2026-11-27T07:00:00.000Z'
        from generate_series(${rows + 1}::int, ${size}::int) as i`.execute(db);
      rows = size;

      sent = [];
      expect((await store.subscribers.findBySubscriberId(ENV, subscriberId(2)))?.subscriberId).toBe(subscriberId(2));
      expect(sent).toHaveLength(1);
      expect(scans(await genericPlanOf(pool, sent[0]!)), `one key at ${size} rows`).toEqual(['Index Scan subscribers_subscriber_id_unique']);

      sent = [];
      const found = await Promise.all([1, 2, 3].map((i) => store.subscribers.findBySubscriberId(ENV, subscriberId(i))));
      expect(found.map((subscriber) => subscriber?.subscriberId)).toEqual([1, 2, 3].map(subscriberId));
      // The first read goes out alone, the two made while it was in flight together.
      expect(sent).toHaveLength(2);
      expect(scans(await genericPlanOf(pool, withArrayLiterals(sent[1]!))), `a batch at ${size} rows`).toEqual(['Index Scan subscribers_subscriber_id_unique']);
    }
  });
});
