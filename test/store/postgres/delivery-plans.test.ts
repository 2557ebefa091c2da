import pg from 'pg';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/sql/schema.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { servicesAvailable } from '../../helpers/databases.js';
import { genericPlanOf, scansOf, withArrayLiterals } from '../../helpers/pg-plans.js';
import { recordingPostgresStore } from '../../helpers/recording-postgres-store.js';

/**
 * The generic plans of the by-key statements a scaled-out delivery runs (issue 24, BENCHMARKS.md session 14). They run
 * as prepared statements, and PostgreSQL settles on a generic plan after five runs and keeps it for the connection's
 * life: settled on a fresh schema (a few rows, never analysed, as on a machine with autovacuum off) it read the trigger
 * through `triggers_transaction_unique` (every trigger of the environment) and the event ids' owners by a sequential
 * scan, both growing with every row written since. Each statement must reach its row by its key whatever the
 * statistics: planned here with plan_cache_mode = force_generic_plan, on tables of three rows never analysed.
 */
const available = await servicesAvailable(['PostgreSQL']);
const ENV = 'env-delivery-plans';


describe.skipIf(!available)('PostgreSQL generic plans of the delivery statements', () => {
  const recording = recordingPostgresStore(async (db) => {
    await sql`insert into triggers (id, environment_id, organization_id, transaction_id, workflow_id, request, state, created_at, updated_at)
      select 't' || i, ${ENV}, 'org', 'tx' || i, 'wf', '{}', 'accepted', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z' from generate_series(1, 3) as i`.execute(db);
    await sql`insert into subscribers (id, environment_id, organization_id, subscriber_id, data, channels, topics, created_at, updated_at)
      select 's' || i, ${ENV}, 'org', 'sub-' || i, '{}', '[]', '[]', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z' from generate_series(1, 3) as i`.execute(db);
    await sql`insert into notifications (id, environment_id, organization_id, subscriber_id, external_subscriber_id, transaction_id, document, created_at, updated_at)
      select 'n' || i, ${ENV}, 'org', 's' || i, 'sub-' || i, 'tx' || i, '{}', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z' from generate_series(1, 3) as i`.execute(db);
  });
  let pool: pg.Pool;
  let db: Kysely<Database>;
  let store: SqlStore;
  beforeAll(() => void ({ pool, db, store } = recording()));
  const sent = () => recording().sent;

  async function statementOf(run: () => Promise<unknown>): Promise<CompiledQuery> {
    recording().clear();
    await run();
    expect(sent()).toHaveLength(1);
    return sent()[0]!;
  }



  it('reads the trigger and sets its state by the primary key', async () => {
    const read = await statementOf(() => store.triggers.get(ENV, 't2'));
    expect(scansOf(await genericPlanOf(pool, read))).toEqual(['Index Scan triggers_pkey']);
    // The held write's last part (its state) alone, as the trigger path compiles it.
    const update = store.triggers.setStateStatement(ENV, 't2', 'processed');
    expect(scansOf(await genericPlanOf(pool, update))).toEqual(['Index Scan triggers_pkey']);
    expect((await store.triggers.get(ENV, 't2'))?.state).toBe('accepted');
  });

  /** The statements a burst of calls made at once sends: the first alone, the others together (CoalescedBatches). */
  async function burstStatements(run: () => Array<Promise<unknown>>): Promise<CompiledQuery[]> {
    recording().clear();
    await Promise.all(run());
    return [...sent()];
  }

  it('reads the triggers of concurrent jobs in one statement, one probe of the primary key each', async () => {
    const burst = await burstStatements(() => ['t1', 't2', 't3'].map((id) => store.triggers.get(ENV, id)));
    expect(burst).toHaveLength(2);
    expect(scansOf(await genericPlanOf(pool, withArrayLiterals(burst[1]!)))).toEqual(['Index Scan triggers_pkey']);
  });

  it('finds the owners of the candidate event ids by the primary key, one probe each, never by a scan', async () => {
    const pair = await statementOf(() => store.notifications.findOwners(ENV, ['n1', 'n3']));
    expect(scansOf(await genericPlanOf(pool, pair))).toEqual(['Index Scan notifications_pkey', 'Index Scan notifications_pkey']);
    const one = await statementOf(() => store.notifications.findOwners(ENV, ['n2']));
    expect(scansOf(await genericPlanOf(pool, one))).toEqual(['Index Scan notifications_pkey']);
    expect(await store.notifications.findOwners(ENV, ['n1', 'missing', 'n3'])).toEqual([
      { id: 'n1', subscriberId: 's1', transactionId: 'tx1' },
      { id: 'n3', subscriberId: 's3', transactionId: 'tx3' },
    ]);
  });

  it("refuses a taken event id (the first-step write's guard) by the primary key, never by a scan", async () => {
    const guard = store.notifications.takenIdGuardStatement('n2');
    expect(scansOf(await genericPlanOf(pool, guard))).toEqual(['Index Scan notifications_pkey']);
  });

  // Migration 0032 dropped execution_details_job: a job's details (jobs.get, run for every later step) are read
  // through the job's event, by execution_details_notification, never by a scan of the details.
  it("reads a job's details through its event's index", async () => {
    await sql`insert into jobs (id, environment_id, organization_id, notification_id, subscriber_id, transaction_id, step_index, type, status, provider_id, document, created_at, updated_at)
      select 'j' || i, ${ENV}, 'org', 'n' || i, 's' || i, 'tx' || i, 0, 'in_app', 'completed', 'novu', '{}', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z' from generate_series(1, 3) as i`.execute(db);
    await sql`insert into execution_details (id, environment_id, job_id, notification_id, status, detail, source, created_at)
      select 'd' || i, ${ENV}, 'j' || ((i % 3) + 1), 'n' || ((i % 3) + 1), 'Success', 'Message sent', 'Internal', '2026-11-26T00:00:00.000Z' from generate_series(1, 9) as i`.execute(db);
    recording().clear();
    const job = await store.jobs.get(ENV, 'j2');
    expect(job?.executionDetails.map((detail) => detail._id).sort()).toEqual(['d1', 'd4', 'd7']);
    const details = sent().find((query) => /from "execution_details"/.test(query.sql));
    expect(details, sent().map((query) => query.sql).join('\n')).toBeDefined();
    expect(scansOf(await genericPlanOf(pool, details!))).toEqual(['Index Scan execution_details_notification']);
  });

  it('reads a subscriber by subscriberId through its unique index once the table has grown (a plan made again, see preparedGeneration)', async () => {
    const read = await statementOf(() => store.subscribers.findBySubscriberId(ENV, 'sub-2'));
    await sql`insert into subscribers (id, environment_id, organization_id, subscriber_id, data, channels, topics, created_at, updated_at)
      select 'g' || i, ${ENV}, 'org', 'grown-' || i, '{}', '[]', '[]', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z' from generate_series(1, 5000) as i`.execute(db);
    expect(scansOf(await genericPlanOf(pool, read))).toEqual(['Index Scan subscribers_subscriber_id_unique']);
  });
});
