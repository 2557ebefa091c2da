import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/main.js';
import type { Database } from '../src/store/sql/schema.js';
import { countWalFrames } from './lib/wal-frames.js';

/**
 * `npm run bench`: the embedded server (API + worker in one process, SQLite) under load from client threads.
 * Measures triggers accepted per second, in-app messages delivered per second, trigger→message latency
 * (p50/p99, one trigger at a time) and, as a reference, a bare Fastify route returning a constant 2 KB JSON
 * measured with the same clients. Prints a table and writes bench/results/latest.json (embedded) or
 * bench/results/engine-scaleout.json (`--mode scaleout`: PostgreSQL + BullMQ on Redis, same single process).
 * `--api-only` stops the worker before the load and reports what the API alone accepts and its CPU per trigger
 * (bench/results/engine-api-only.json): the ingestion figure when delivery runs elsewhere or after the burst.
 * `--wal-pages` (embedded) keeps every page the load writes in SQLite's WAL (checkpoints off, so its rates are not
 * the reference figures) and reports the pages written per trigger and which table or index they belong to
 * (bench/results/wal-pages.json): each page is a frame written at a commit, the write cost of a trigger.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_0123456789abcdef0123456789abcdef';
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 300);

interface LoadResult {
  statuses: Record<string, number>;
  sent: number;
  errors: number;
  elapsedMs: number;
}

function runLoad(options: { url: string; method: string; headers?: Record<string, string>; template?: unknown; prefix?: string }): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(here, 'load-worker.mjs'), {
      workerData: {
        url: options.url,
        method: options.method,
        headers: options.headers ?? {},
        bodies: options.template ? { template: options.template } : undefined,
        prefix: options.prefix ?? 'n',
        concurrency: CONCURRENCY,
        durationMs: DURATION_MS,
      },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function baseline(): Promise<number> {
  const payload = { data: Array.from({ length: 20 }, (_, i) => ({ id: i.toString(16).padStart(24, '0'), name: `item ${i}`, text: 'x'.repeat(60) })) };
  const constant = JSON.stringify(payload).slice(0, 2048);
  const app = Fastify({ logger: false });
  app.get('/constant', async (_request, reply) => reply.type('application/json').send(constant));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const result = await runLoad({ url: `${url}/constant`, method: 'GET' });
  await app.close();
  return ((result.statuses['200'] ?? 0) * 1000) / result.elapsedMs;
}

const POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379/0';

/** `--mode scaleout`: the same process (`herald start`) over PostgreSQL (a schema of its own) and BullMQ on Redis. */
function modeOf(argv: string[]): 'embedded' | 'scaleout' {
  const index = argv.indexOf('--mode');
  const mode = index >= 0 ? argv[index + 1] : 'embedded';
  if (mode !== 'embedded' && mode !== 'scaleout') throw new Error('--mode must be embedded or scaleout');
  return mode;
}

async function withPostgres(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * `--wal-pages`: stops the server's connection from checkpointing and empties the WAL (from a second connection, as
 * the server's may hold a write transaction open), so that every page the load writes stays in the WAL to be counted.
 */
async function startWalCount(db: Kysely<Database>, dataDir: string): Promise<{ reader: BetterSqlite3.Database; walPath: string }> {
  await sql`pragma wal_autocheckpoint = 0`.execute(db);
  const path = join(dataDir, 'herald.sqlite');
  const reader = new BetterSqlite3(path);
  // No waiting inside SQLite: this thread also runs the server, whose open write transaction it would be waiting for.
  reader.pragma('busy_timeout = 0');
  for (let attempt = 0; attempt < 200; attempt++) {
    const [result] = reader.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
    if (!result?.busy) return { reader, walPath: `${path}-wal` };
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('could not empty the WAL before the load');
}

function reportWalPages(wal: { reader: BetterSqlite3.Database; walPath: string }, counts: { triggers: number; accepted: number }): void {
  const owners = new Map(
    (wal.reader.prepare('select pageno, name from dbstat').all() as Array<{ pageno: number; name: string }>).map((row) => [row.pageno, row.name]),
  );
  const frames = countWalFrames(wal.walPath, (page) => owners.get(page));
  wal.reader.close();
  const perTrigger = (value: number) => Number((value / Math.max(1, counts.triggers)).toFixed(2));
  const byOwner = Object.fromEntries([...frames.byOwner].sort((a, b) => b[1] - a[1]).map(([owner, count]) => [owner, perTrigger(count)]));
  const results = {
    date: new Date().toISOString(),
    settings: { durationMs: DURATION_MS, concurrency: CONCURRENCY },
    triggersAccepted: counts.accepted,
    triggersDelivered: counts.triggers,
    pagesWrittenPerTrigger: perTrigger(frames.frames),
    commitsPerTrigger: perTrigger(frames.commits),
    pagesPerTriggerByTableOrIndex: byOwner,
  };
  console.table({ 'pages written per trigger': results.pagesWrittenPerTrigger, 'commits per trigger': results.commitsPerTrigger });
  console.table(Object.fromEntries(Object.entries(byOwner).slice(0, 20)));
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(join(here, 'results', 'wal-pages.json'), JSON.stringify(results, null, 2) + '\n');
  console.log('written to bench/results/wal-pages.json');
}

async function main(): Promise<void> {
  const mode = modeOf(process.argv.slice(2));
  const apiOnly = process.argv.includes('--api-only');
  const walPages = process.argv.includes('--wal-pages');
  if (walPages && mode !== 'embedded') throw new Error('--wal-pages reads the embedded database: use it without --mode scaleout');
  const suffix = randomBytes(5).toString('hex');
  const schema = mode === 'scaleout' ? `herald_bench_engine_${suffix}` : undefined;
  if (schema) await withPostgres(`create schema ${schema}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
  const config = loadConfig({
    HERALD_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
    HERALD_RATE_LIMIT: 'false',
    HERALD_QUEUE_POLL_MS: '50',
    // --wal-pages counts the pages left in the WAL: the background checkpoints (session 16) would copy them out first.
    ...(walPages ? { HERALD_SQLITE_CHECKPOINT_MS: '0' } : {}),
    // Tuning knobs taken from the environment, so their effect can be measured.
    ...Object.fromEntries(
      ['HERALD_WORKER_CONCURRENCY', 'HERALD_DATABASE_POOL_SIZE'].flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])),
    ),
    ...(schema ? { DATABASE_URL: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, REDIS_URL } : {}),
  });
  const server = await startServer(config, { container: { redisPrefix: `herald_bench_engine_${suffix}` } });
  const db = server.container.db;
  const headers = { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' };
  try {
    const created = await fetch(`${server.url}/v2/workflows`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ workflowId: 'bench', name: 'Bench', steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Hi {{ subscriber.subscriberId }}', body: 'Order {{ payload.n }}' } }] }),
    });
    if (created.status !== 201) throw new Error(`workflow create failed: ${created.status} ${await created.text()}`);

    const referenceRps = await baseline();

    // Latency first, on an idle server: one trigger at a time, timed until its message row exists.
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const transactionId = `latency-${i}`;
      const started = Date.now();
      const response = await fetch(`${server.url}/v1/events/trigger`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench', to: `lat-${i % 50}`, payload: { n: i }, transactionId }) });
      await response.text();
      for (;;) {
        const row = await db.selectFrom('messages').select('created_at').where('transaction_id', '=', transactionId).executeTakeFirst();
        if (row) {
          latencies.push(Date.parse(row.created_at) - started);
          break;
        }
        if (Date.now() - started > 10_000) throw new Error(`no message for ${transactionId} after 10 s`);
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    latencies.sort((a, b) => a - b);

    if (apiOnly) await server.worker.stop();
    const walReader = walPages ? await startWalCount(db, dataDir) : undefined;
    const messagesBefore = Number((await db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    const loadStarted = Date.now();
    const loopBefore = performance.eventLoopUtilization();
    const load = await runLoad({
      url: `${server.url}/v1/events/trigger`,
      method: 'POST',
      headers,
      template: { name: 'bench', to: 'sub-__N__', payload: { n: '__N__' }, transactionId: 'tx-__N__' },
      prefix: 'load',
    });
    const accepted = load.statuses['201'] ?? 0;
    if (apiOnly) {
      const loop = performance.eventLoopUtilization(loopBefore);
      const results = {
        mode,
        apiOnly: true,
        date: new Date().toISOString(),
        machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
        settings: { durationMs: DURATION_MS, concurrency: CONCURRENCY },
        referenceFastify2kbRps: Math.round(referenceRps),
        triggersAcceptedPerSecond: Math.round((accepted * 1000) / load.elapsedMs),
        triggerStatuses: load.statuses,
        triggerErrors: load.errors,
        serverBusyMsPerAcceptedTrigger: Number((loop.active / Math.max(1, accepted)).toFixed(3)),
      };
      console.table({
        'bare Fastify 2 KB JSON (req/s)': results.referenceFastify2kbRps,
        'triggers accepted, worker stopped (/s)': results.triggersAcceptedPerSecond,
        'server busy ms per accepted trigger': results.serverBusyMsPerAcceptedTrigger,
      });
      mkdirSync(join(here, 'results'), { recursive: true });
      writeFileSync(join(here, 'results', 'engine-api-only.json'), JSON.stringify(results, null, 2) + '\n');
      console.log('written to bench/results/engine-api-only.json');
      return;
    }
    const expectedMessages = messagesBefore + accepted;
    let delivered = messagesBefore;
    const drainDeadline = Date.now() + 300_000;
    while (delivered < expectedMessages && Date.now() < drainDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      delivered = Number((await db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    }
    const deliveredMs = Date.now() - loadStarted;
    if (walReader) {
      reportWalPages(walReader, { triggers: delivered - messagesBefore, accepted });
      return;
    }
    // Busy time of the server's event loop (API + worker share it) per delivered trigger: less sensitive to other
    // load on the machine than the rates, so the figure to compare between runs.
    const loop = performance.eventLoopUtilization(loopBefore);

    const results = {
      mode,
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      settings: { durationMs: DURATION_MS, concurrency: CONCURRENCY, latencySamples: LATENCY_SAMPLES },
      referenceFastify2kbRps: Math.round(referenceRps),
      triggersAcceptedPerSecond: Math.round((accepted * 1000) / load.elapsedMs),
      triggerStatuses: load.statuses,
      triggerErrors: load.errors,
      inAppMessagesDeliveredPerSecond: Math.round(((delivered - messagesBefore) * 1000) / deliveredMs),
      messagesDelivered: delivered - messagesBefore,
      serverBusyMsPerTrigger: Number((loop.active / Math.max(1, delivered - messagesBefore)).toFixed(3)),
      messagesExpected: accepted,
      latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1] },
    };
    console.table({
      'bare Fastify 2 KB JSON (req/s)': results.referenceFastify2kbRps,
      'triggers accepted (/s)': results.triggersAcceptedPerSecond,
      'in-app messages delivered (/s)': results.inAppMessagesDeliveredPerSecond,
      'server busy ms per trigger': results.serverBusyMsPerTrigger,
      'trigger→message p50 (ms)': results.latencyMs.p50,
      'trigger→message p99 (ms)': results.latencyMs.p99,
    });
    mkdirSync(join(here, 'results'), { recursive: true });
    const file = mode === 'embedded' ? 'latest.json' : 'engine-scaleout.json';
    writeFileSync(join(here, 'results', file), JSON.stringify(results, null, 2) + '\n');
    console.log(`written to bench/results/${file}`);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (schema) await withPostgres(`drop schema if exists ${schema} cascade`);
  }
}

await main();
