import pg from 'pg';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/sql/schema.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { servicesAvailable } from '../../helpers/databases.js';
import { genericPlanOf, scansOf, withArrayLiterals } from '../../helpers/pg-plans.js';
import { recordingPostgresStore } from '../../helpers/recording-postgres-store.js';

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
  const recording = recordingPostgresStore();
  let pool: pg.Pool;
  let db: Kysely<Database>;
  let store: SqlStore;
  beforeAll(() => void ({ pool, db, store } = recording()));
  const sent = () => recording().sent;

  const subscriberId = (i: number) => `bench-mih2k1x-${i}`;

  it('finds one subscriber, and a batch of them, by the unique index at every size the table passes through', async () => {
    let rows = 0;
    for (const size of SIZES) {
      await sql`insert into subscribers (id, environment_id, organization_id, subscriber_id, data, channels, topics, created_at, updated_at)
        select '692797d1' || lpad(to_hex(i), 16, '0'), ${ENV}, 'org', 'bench-mih2k1x-' || i, '{}', '[]', '[]', '2026-11-27T07:00:00.000Z', '2026-11-27T07:00:00.000Z'
        from generate_series(${rows + 1}::int, ${size}::int) as i`.execute(db);
      rows = size;

      recording().clear();
      expect((await store.subscribers.findBySubscriberId(ENV, subscriberId(2)))?.subscriberId).toBe(subscriberId(2));
      expect(sent()).toHaveLength(1);
      expect(scansOf(await genericPlanOf(pool, sent()[0]!)), `one key at ${size} rows`).toEqual(['Index Scan subscribers_subscriber_id_unique']);

      recording().clear();
      const found = await Promise.all([1, 2, 3].map((i) => store.subscribers.findBySubscriberId(ENV, subscriberId(i))));
      expect(found.map((subscriber) => subscriber?.subscriberId)).toEqual([1, 2, 3].map(subscriberId));
      // The first read goes out alone, the two made while it was in flight together.
      expect(sent()).toHaveLength(2);
      expect(scansOf(await genericPlanOf(pool, withArrayLiterals(sent()[1]!))), `a batch at ${size} rows`).toEqual(['Index Scan subscribers_subscriber_id_unique']);
    }
  });
});
