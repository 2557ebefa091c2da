import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { Command } from 'commander';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { loadConfig, type Config } from '../src/config.js';
import { createContainer } from '../src/container.js';
import { startServer } from '../src/main.js';
import type { Database } from '../src/store/sql/schema.js';
import type { RetentionSweepSummary } from '../src/store/ports.js';
import { sweepRetention, type RetentionDeps } from '../src/usecases/retention/sweep-retention.js';
import { bootstrapTenancy } from '../src/usecases/tenancy/bootstrap-tenancy.js';
import { benchMode, positiveInteger } from './lib/cli-options.js';
import { createSeedPlan, seedListRows, seedSubscribers, type ListSeedPlan } from './lib/list-seed.js';

/**
 * `npm run bench:retention`: the retention sweep's cost to triggers, and whether it keeps the SQLite file bounded.
 *
 * (a) Trigger rate (201s per second, 64 clients on a worker thread against the server in this process, as in
 *     `npm run bench`) in alternating phases, without a sweep and while the sweep deletes N expired events (each event
 *     is 5-6 rows: the event, its job, two execution details, its message, a topic link for some; seeded directly in
 *     SQL, created 40 days ago). The sweep is the worker's own (sweepRetention with the server's settings: batches of
 *     500, paced as in production), held between batches during the phases without it, and stopped after the last
 *     phase unless --finish-sweep. Also reported: the expired rows deleted during the measured phases.
 * (b) Embedded only: three cycles of filling M expired events and sweeping them; the database file's size after each
 *     fill and each sweep (WAL checkpointed), next to a control that fills three times without sweeping.
 *
 *   node --import tsx bench/retention.ts [--mode embedded|scaleout] [--events 200000] [--duration 20] [--rounds 4] [--cycle-events 50000] [--only rate|cycles] [--sweep all|events|messages] [--finish-sweep]
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_0123456789abcdef0123456789abcdef';
const POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379/0';
const DAY = 86_400_000;

interface Options {
  mode: 'embedded' | 'scaleout';
  events: number;
  duration: number;
  cycleEvents: number;
  concurrency: number;
  only?: 'rate' | 'cycles';
  finishSweep?: boolean;
  rounds: number;
  sweep: 'all' | 'events' | 'messages';
}

function parseOptions(argv: string[]): Options {
  return new Command()
    .name('bench:retention')
    .option('--mode <mode>', 'embedded (SQLite) or scaleout (PostgreSQL + BullMQ) for (a)', benchMode, 'embedded')
    .option('--events <n>', 'expired events seeded for (a); about 5.2 rows each', positiveInteger, 200_000)
    .option('--duration <s>', 'seconds of load per phase of (a)', positiveInteger, 20)
    .option('--cycle-events <n>', 'expired events per fill of (b)', positiveInteger, 50_000)
    .option('--concurrency <n>', 'HTTP clients', positiveInteger, 64)
    .option('--rounds <n>', '(a): rounds of two phases (without and during the sweep, order alternating)', positiveInteger, 4)
    .option('--only <part>', 'rate (a) or cycles (b) alone')
    .option('--sweep <kinds>', '(a): what the sweep deletes: all (events first, then messages), events or messages', 'all')
    .option('--finish-sweep', '(a): let the sweep finish before the last phase (default: stop it after the measured phase)')
    .parse(argv)
    .opts<Options>();
}

interface LoadResult {
  statuses: Record<string, number>;
  elapsedMs: number;
}

function runLoad(url: string, concurrency: number, durationMs: number, prefix: string): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(here, 'load-worker.mjs'), {
      workerData: {
        url,
        method: 'POST',
        headers: { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' },
        bodies: { template: { name: 'bench', to: 'sub-__N__', payload: { n: '__N__' }, transactionId: 'tx-__N__' } },
        prefix,
        concurrency,
        durationMs,
      },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

async function countRows(db: Kysely<Database>): Promise<number> {
  let total = 0;
  for (const table of ['notifications', 'notification_topics', 'jobs', 'execution_details', 'messages'] as const) {
    total += Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
  }
  return total;
}

async function seedExpired(db: Kysely<Database>, deps: RetentionDeps, dialect: 'sqlite' | 'postgres', events: number, label: string): Promise<ListSeedPlan> {
  const environment = (await deps.store.tenancy.findEnvironmentByName('development'))!;
  // Every row is created more than 40 days ago: expired for the 30-day retention swept below.
  const plan = createSeedPlan(environment._id, environment._organizationId, { maxRows: events, nowMs: Date.now() - 40 * DAY, subscriberCount: 200 });
  await seedSubscribers(db, deps.store, plan);
  let last = 0;
  await seedListRows(db, plan, 0, events, {
    dialect,
    rowsPerTransaction: 5_000,
    onProgress: ({ done, total, elapsedMs }) => {
      if (done - last >= total / 5 || done === total) {
        last = done;
        console.log(`  ${label}: seeded ${done}/${total} events in ${(elapsedMs / 1000).toFixed(0)} s`);
      }
    },
  });
  return plan;
}

/**
 * The server's deps with retention on (30 days for both): the server itself runs with retention off, so that only this
 * sweep runs. `deleted` counts the rows the sweep's batches removed so far.
 */
function sweepDeps(deps: RetentionDeps, config: Config, deleted = { rows: 0 }, kinds: Options['sweep'] = 'all'): RetentionDeps {
  const retention = deps.store.retention;
  // Only the two deleting methods are wrapped; the rest are the repository's own, bound to it.
  const counting: typeof retention = Object.assign(Object.create(Object.getPrototypeOf(retention)), retention, {
    deleteExpiredEvents: async (...args: Parameters<typeof retention.deleteExpiredEvents>) => {
      const result = await retention.deleteExpiredEvents(...args);
      deleted.rows += result.events + result.jobs + result.executionDetails;
      return result;
    },
    deleteExpiredMessages: async (...args: Parameters<typeof retention.deleteExpiredMessages>) => {
      const result = await retention.deleteExpiredMessages(...args);
      deleted.rows += result.deleted;
      return result;
    },
  });
  return {
    ...deps,
    store: { tenancy: deps.store.tenancy, retention: counting } as RetentionDeps['store'],
    config: {
      ...config,
      retention: { ...config.retention, eventDays: kinds === 'messages' ? undefined : 30, messageDays: kinds === 'events' ? undefined : 30 },
    },
  };
}

async function triggerRateDuringSweep(options: Options): Promise<Record<string, unknown>> {
  const suffix = randomBytes(5).toString('hex');
  const schema = options.mode === 'scaleout' ? `herald_bench_retention_${suffix}` : undefined;
  if (schema) await withPostgres(`create schema ${schema}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-retention-'));
  const config = loadConfig({
    HERALD_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
    HERALD_RATE_LIMIT: 'false',
    HERALD_QUEUE_POLL_MS: '50',
    HERALD_RETENTION_DAYS: 'off',
    HERALD_MESSAGE_RETENTION_DAYS: 'off',
    ...(schema ? { DATABASE_URL: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, REDIS_URL } : {}),
  });
  const server = await startServer(config, { container: { redisPrefix: `herald_bench_retention_${suffix}` } });
  const db = server.container.db;
  const deps = server.container.deps;
  try {
    const created = await fetch(`${server.url}/v2/workflows`, {
      method: 'POST',
      headers: { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workflowId: 'bench', name: 'Bench', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Order {{ payload.n }}' } }] }),
    });
    if (created.status !== 201) throw new Error(`workflow create failed: ${created.status} ${await created.text()}`);
    console.log(`(a) ${options.mode}: seeding ${options.events} expired events`);
    await seedExpired(db, deps, options.mode === 'scaleout' ? 'postgres' : 'sqlite', options.events, 'a');
    const expiredRows = await countRows(db);
    console.log(`  ${expiredRows} rows in the event and message tables, all expired`);

    const durationMs = options.duration * 1000;
    const rate = (result: LoadResult) => ((result.statuses['201'] ?? 0) * 1000) / result.elapsedMs;
    // A short warm-up, so the first measured phase does not pay for JIT and caches.
    await runLoad(`${server.url}/v1/events/trigger`, options.concurrency, 3000, 'warm');

    // One sweep, held between its batches while a phase without a sweep runs: phases alternate (without, with, ...),
    // so the load other processes put on a shared machine falls on both kinds alike.
    let held = true;
    let stopSweep = false;
    let summary: RetentionSweepSummary | undefined;
    let sweepEndedAt = 0;
    const gate = async (ms: number) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      while (held && !stopSweep) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const deleted = { rows: 0 };
    const sweep = sweepRetention(sweepDeps(deps, config, deleted, options.sweep), { owner: 'bench', sleep: gate, shouldStop: () => stopSweep }).then((result) => {
      summary = result;
      sweepEndedAt = performance.now();
    });
    const deletedSoFar = async () => deleted.rows;
    const phases: Array<{ phase: 'without' | 'during'; triggersPerSecond: number; rowsDeleted: number }> = [];
    for (let round = 0; round < options.rounds; round++) {
      // ABBA order: a load that drifts over the run (other processes) weighs on both kinds alike.
      for (const phase of round % 2 ? (['during', 'without'] as const) : (['without', 'during'] as const)) {
        held = phase === 'without';
        const deletedBefore = await deletedSoFar();
        const result = await runLoad(`${server.url}/v1/events/trigger`, options.concurrency, durationMs, `${phase}-${round}`);
        held = true;
        const rowsDeleted = (await deletedSoFar()) - deletedBefore;
        phases.push({ phase, triggersPerSecond: Math.round(rate(result)), rowsDeleted });
        console.log(`  round ${round + 1}, ${phase} a sweep: ${rate(result).toFixed(0)} triggers/s, ${rowsDeleted} expired rows deleted meanwhile`);
      }
    }
    const sweepRanThroughout = sweepEndedAt === 0;
    // The sweep is paced to leave the database to triggers, so 1M rows take many minutes on a loaded machine:
    // unless asked to wait for it, it is stopped at its next batch and what it did so far is reported.
    if (options.finishSweep) held = false;
    else stopSweep = true;
    const sweepStartedAt = performance.now();
    await sweep;
    const total = (phase: 'without' | 'during') => phases.filter((entry) => entry.phase === phase).reduce((sum, entry) => sum + entry.triggersPerSecond, 0);
    const deletedWhileMeasured = phases.filter((entry) => entry.phase === 'during').reduce((sum, entry) => sum + entry.rowsDeleted, 0);
    console.log(`  sweep${summary?.interrupted ? ' (stopped after the measured phases)' : ''}: ${summary?.events} events, ${summary?.jobs} jobs, ${summary?.executionDetails} details, ${summary?.messages} messages`);
    return {
      mode: options.mode,
      sweepDeletes: options.sweep,
      expiredEvents: options.events,
      expiredRows,
      secondsPerPhase: options.duration,
      rounds: options.rounds,
      concurrency: options.concurrency,
      phases,
      triggersPerSecondWithout: Math.round(total('without') / options.rounds),
      triggersPerSecondDuringSweep: Math.round(total('during') / options.rounds),
      duringVersusWithout: Number((total('during') / total('without')).toFixed(3)),
      rowsDeletedDuringMeasuredPhases: deletedWhileMeasured,
      sweepRowsPerSecondUnderLoad: Math.round(deletedWhileMeasured / (options.rounds * options.duration)),
      sweepRanThroughoutTheLoad: sweepRanThroughout,
      sweepFinished: summary?.interrupted === false,
      secondsToFinishAfterTheLoad: options.finishSweep ? Math.round((performance.now() - sweepStartedAt) / 1000) : undefined,
      sweep: summary,
    };
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (schema) await withPostgres(`drop schema if exists ${schema} cascade`);
  }
}

async function fileBytes(dataDir: string): Promise<number> {
  const file = join(dataDir, 'herald.sqlite');
  // Checkpointed from a connection of its own (the server's may be inside its group commit's shared transaction).
  const reader = new BetterSqlite3(file);
  reader.pragma('busy_timeout = 0');
  try {
    for (let attempt = 0; ; attempt++) {
      const [result] = reader.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      if (!result?.busy) break;
      if (attempt > 500) throw new Error('could not checkpoint the WAL');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    reader.close();
  }
  return statSync(file).size + (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
}

const mb = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1));

async function fillAndExpireCycles(options: Options): Promise<Record<string, unknown>> {
  const runs: Record<string, Array<{ cycle: number; afterFillMb: number; afterSweepMb?: number }>> = {};
  for (const sweeping of [true, false]) {
    const label = sweeping ? 'swept' : 'control (no sweep)';
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-cycles-'));
    const config = loadConfig({ HERALD_DATA_DIR: dataDir, LOG_LEVEL: 'silent', HERALD_RETENTION_PAUSE_MS: '0' });
    const container = await createContainer(config);
    await bootstrapTenancy(container.deps);
    const rows: Array<{ cycle: number; afterFillMb: number; afterSweepMb?: number }> = [];
    try {
      for (let cycle = 1; cycle <= 3; cycle++) {
        console.log(`(b) ${label}, cycle ${cycle}: filling ${options.cycleEvents} expired events`);
        await seedExpiredCycle(container.db, container.deps, options.cycleEvents, cycle);
        const afterFill = await fileBytes(dataDir);
        const row: { cycle: number; afterFillMb: number; afterSweepMb?: number } = { cycle, afterFillMb: mb(afterFill) };
        if (sweeping) {
          // Pauses off: this part measures space, not the effect on triggers.
          await sweepRetention(sweepDeps(container.deps, config), { owner: 'bench', sleep: async () => undefined });
          row.afterSweepMb = mb(await fileBytes(dataDir));
        }
        console.log(`  ${JSON.stringify(row)}`);
        rows.push(row);
      }
    } finally {
      await container.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
    runs[sweeping ? 'swept' : 'control'] = rows;
  }
  return { eventsPerFill: options.cycleEvents, ...runs };
}

/** Each cycle's subscribers and events are new (ids and subscriberIds made unique by the cycle number). */
async function seedExpiredCycle(db: Kysely<Database>, deps: RetentionDeps, events: number, cycle: number): Promise<void> {
  const environment = (await deps.store.tenancy.findEnvironmentByName('development'))!;
  const plan = createSeedPlan(environment._id, environment._organizationId, { maxRows: events, nowMs: Date.now() - 40 * DAY, subscriberCount: 50 });
  plan.templateIdentifier = `cycle-${cycle}`;
  // seedSubscribers names subscribers by index: a later cycle's would collide with the first's, so they are renamed.
  await db.updateTable('subscribers').set({ subscriber_id: sql`subscriber_id || ${`-old${cycle}`}` }).where('subscriber_id', 'like', 'bench-subscriber-%').execute();
  await db.updateTable('topics').set({ key: sql`key || ${`-old${cycle}`}` }).where('key', 'like', 'bench-topic-%').execute();
  await seedSubscribers(db, deps.store, plan);
  await seedListRows(db, plan, 0, events, { dialect: 'sqlite', rowsPerTransaction: 5_000 });
}

async function withPostgres(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  const started = new Date().toISOString();
  const rate = options.only === 'cycles' ? undefined : await triggerRateDuringSweep(options);
  const cycles = options.only === 'rate' || options.mode !== 'embedded' ? undefined : await fillAndExpireCycles(options);
  const results = { date: started, command: `npm run bench:retention -- ${process.argv.slice(2).join(' ')}`.trim(), triggerRate: rate, fillAndExpire: cycles };
  console.log(JSON.stringify(results, null, 2));
  mkdirSync(join(here, 'results'), { recursive: true });
  const file = join(here, 'results', `retention-${options.mode}${options.only ? `-${options.only}` : ''}${options.sweep !== 'all' ? `-${options.sweep}` : ''}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  console.log(`written to ${file}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
