import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { openPostgres } from '../../src/store/postgres/connection.js';
import { migrateToLatest } from '../../src/store/sql/migrate.js';
import { PRINT_SQL } from '../../src/store/sql/notification-repository.js';
import type { Database } from '../../src/store/sql/schema.js';
import { createTestDatabase, openTestPostgres, type TestSchema, type TestSqlDatabase } from './databases.js';

/**
 * Adds events `from`..`to` of one environment to a PostgreSQL database in SQL, each with a job, three execution details
 * and a kept text, 0.7 ms apart from 2026-11-26 10:00: the data the prepared events-page plan tests grow their tables
 * with after the plan was made.
 */
export async function growEvents(db: Kysely<Database>, env: string, from: number, to: number): Promise<void> {
  const range = sql`generate_series(${sql.lit(from)}, ${sql.lit(to)}) i`;
  await insertBareEvents(db, env, from, to);
  await sql`insert into jobs (id, environment_id, organization_id, notification_id, subscriber_id, transaction_id, template_id, step_index, type, status, provider_id, document, created_at, updated_at)
    select 'j' || lpad(to_hex(i), 24, '0'), ${env}, 'org', lpad(to_hex(i), 24, '0'), 's', 't' || i, null, 0, 'in_app', 'completed', 'p', '{}',
      '2026-11-26T10:00:00.000Z', '2026-11-26T10:00:00.000Z'
    from ${range}`.execute(db);
  await sql`insert into execution_details (id, environment_id, job_id, notification_id, status, detail, is_retry, is_test, provider_id, raw, source, created_at)
    select 'd' || k || lpad(to_hex(i), 24, '0'), ${env}, 'j' || lpad(to_hex(i), 24, '0'), lpad(to_hex(i), 24, '0'), 'Success', 'x', 0, 0, null, null,
      'Internal', '2026-11-26T10:00:00.000Z'
    from ${range}, generate_series(1, 3) k`.execute(db);
  await sql`insert into notification_texts (notification_id, environment_id, text, print)
    select notifications.id, notifications.environment_id, '{"kept":' || notifications.transaction_id || '}', ${sql.raw(PRINT_SQL)}
    from notifications where environment_id = ${env} and id in (select lpad(to_hex(i), 24, '0') from ${range})`.execute(db);
}

/**
 * Adds events `from`..`to` of one environment in SQL, rows only (no jobs, details or texts), 0.7 ms apart from
 * 2026-11-26 10:00 (about 1,430 a second): event i has the id lpad(hex(i), 24) and created_at 10:00 + i × 0.7 ms.
 */
export async function insertBareEvents(db: Kysely<Database>, env: string, from: number, to: number): Promise<void> {
  await sql`insert into notifications (id, environment_id, organization_id, subscriber_id, external_subscriber_id, transaction_id, document, created_at, updated_at)
    select lpad(to_hex(i), 24, '0'), ${env}, 'org', 's', 'sub', 't' || i, '{}',
      to_char(timestamp '2026-11-26 10:00:00' + i * interval '0.7 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '2026-11-26T10:00:00.000Z'
    from generate_series(${sql.lit(from)}, ${sql.lit(to)}) i`.execute(db);
}

/**
 * The set-up of a deep events-page test over a table just filled, called inside its describe: a migrated schema of
 * `test` holding events 1..`rows` of `env` (insertBareEvents), never vacuumed nor analysed, closed after the tests.
 * `db()` once beforeAll has run.
 */
export function bareEventsSchema(env: string, rows: number): () => Kysely<Database> {
  let database: TestSqlDatabase | undefined;
  beforeAll(async () => {
    database = await openTestPostgres();
    await insertBareEvents(database.db, env, 1, rows);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });
  return () => database!.db;
}

/** Runs of a plan experiment before its failure counts (see `onFreshDatabaseUntilPassed` below). */
const ATTEMPTS = 4;
/** Failed runs after a detected reset of the plan cache that are run again besides those (plansWereReset). */
const MAX_RESETS = 4;

/**
 * The set-up of a prepared events-page plan test, called inside its describe: a migrated database of its own holding
 * events 1..30 of `env` (the plan is made then), on one connection (the statements prepared on it and the test's
 * EXPLAIN EXECUTE share it). `db()` once beforeAll has run; `grow` adds events with growEvents, through a second
 * connection.
 *
 * A database of its own, not a schema of `test`: a CREATE or DROP SCHEMA anywhere in a database drops every cached
 * plan of every session in it (PostgreSQL's plan cache resets on any pg_namespace change), and the other test files,
 * run beside this one, create and drop schemas in `test` all the time. The plan would then be made again at 15,000
 * events without statistics (a bitmap scan of every event and a sort), and the test would fail for a reason that is
 * not the plan it checks; with files in parallel that happened in about half the runs. Sessions 20-21 first read it as
 * an invalidation-queue reset (hence the second connection, kept) and retried the experiment (kept as a margin).
 */
export function preparedEventsDatabase(env: string): {
  db: () => Kysely<Database>;
  grow: (from: number, to: number) => Promise<void>;
  onFreshDatabaseUntilPassed: (experiment: () => Promise<void>) => Promise<void>;
} {
  let database: TestSchema | undefined;
  let db: Kysely<Database> | undefined;
  let writer: Kysely<Database> | undefined;
  const grow = (from: number, to: number) => growEvents(writer!, env, from, to);
  const open = async () => {
    database = await createTestDatabase();
    db = openPostgres(database.url, 1);
    writer = openPostgres(database.url, 1);
    await migrateToLatest(db, 'postgres');
    await grow(1, 30);
    await armCanary(db, writer);
  };
  const close = async () => {
    await writer?.destroy();
    await db?.destroy();
    await database?.drop();
  };
  /**
   * Runs the experiment (plans made at 30 events, tables grown, plans checked) and, when it fails, again on a fresh
   * database and connections, up to ATTEMPTS runs in all: a margin for a plan reset no query can see (above). A failed
   * run after which the canary (plansWereReset) shows the connection's plan cache was reset does not count, up to
   * MAX_RESETS of them. A plan that is wrong when made at 30 events fails every run.
   */
  const onFreshDatabaseUntilPassed = async (experiment: () => Promise<void>) => {
    let resets = 0;
    for (let attempt = 1; ; attempt++) {
      try {
        await experiment();
        return;
      } catch (error) {
        // A run whose plans were all dropped (the canary's too) checked plans made after the growth: it does not count.
        const reset = await plansWereReset(db!).catch(() => false);
        if (reset) resets++;
        if (attempt - resets >= ATTEMPTS || attempt >= ATTEMPTS + MAX_RESETS) throw error;
        console.warn(`${env}: run ${attempt} failed${reset ? ' after a reset of its plan cache (it does not count)' : ''}, running it again on a fresh database: ${error instanceof Error ? error.message.slice(0, 2000) : String(error)}`);
        await close();
        await open();
      }
    }
  };
  beforeAll(open, 60_000);
  afterAll(close);
  return { db: () => db!, grow, onFreshDatabaseUntilPassed };
}

const CANARY = 'herald_plan_canary';

/**
 * A plan-cache reset detector on the plan connection `db`: a statement prepared there now, on a table of one page never
 * analysed, whose generic plan (a statement without parameters has no other) estimates its rows from the table's size
 * at planning time (PostgreSQL assumes 10 pages for a smaller table never vacuumed: 1,270 rows); the table then grows
 * to ~200 pages through `writer` (a plan made now: ~26,000 rows). Nothing invalidates that plan but a reset of the
 * connection's whole plan cache, which drops the events pages' plans too. A database of its own still sees such a
 * reset: PostgreSQL's invalidation queue is shared by every database, and a session that falls too far behind it (the
 * other files' migrations, tens of thousands of catalog changes, on a loaded machine) is reset. Session 22, the six
 * PostgreSQL plan files together, 3 runs: the one failed run of first-event-page-prepared came with a reset, and 3 of
 * the 6 passed runs showed one too (checked at their end: after their checks, or on plans that pass either way).
 */
async function armCanary(db: Kysely<Database>, writer: Kysely<Database>): Promise<void> {
  await sql`create table plan_canary (id int, body text)`.execute(writer);
  await sql`insert into plan_canary select 1, repeat('x', 100)`.execute(writer);
  await sql.raw(`prepare ${CANARY} as select * from plan_canary`).execute(db);
  await sql.raw(`execute ${CANARY}`).execute(db);
  await sql`insert into plan_canary select i, repeat('x', 100) from generate_series(2, 12000) i`.execute(writer);
}

/** True when the canary's plan was made again since armCanary: its estimate then counts the grown table. */
async function plansWereReset(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql.raw<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(`explain (format json) execute ${CANARY}`).execute(db);
  const estimated = rows[0]!['QUERY PLAN'][0]!.Plan['Plan Rows'];
  return estimated > 2000;
}
