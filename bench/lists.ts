import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createContainer, type Container } from '../src/container.js';
import { buildApp } from '../src/http/app.js';
import { bootstrapTenancy } from '../src/usecases/tenancy/bootstrap-tenancy.js';
import { runHttpLoad, type HttpLoadResult } from './lib/http-load.js';
import { median } from './lib/rounds.js';
import { createSeedPlan, seedListRows, seedProbes, seedSubscribers, type SeedProbes } from './lib/list-seed.js';
import { benchMode, positiveInteger } from './lib/cli-options.js';
import { vacuumAnalyzeOwnSchema } from './lib/schema-vacuum.js';

/**
 * `npm run bench:lists`: throughput and latency of GET /v1/messages and GET /v1/notifications at growing
 * data sizes (default 10k, 100k, 1M messages and as many events), next to a bare Fastify route returning
 * a constant 2 KB JSON measured in the same process with the same load. The data set grows in place:
 * rows [0, 10k) are seeded, measured, then [10k, 100k) added, and so on.
 *
 *   node --import tsx bench/lists.ts [--mode embedded|scaleout] [--sizes 10000,100000,1000000]
 *
 * embedded = SQLite in a temp directory; scaleout = PostgreSQL (its own schema in database `test`) for
 * the store and Redis for idempotency/rate limits, as `herald api` runs. Only the API is started (no
 * worker), and rate limiting is off so the load is not answered with 429s.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_lists_0123456789abcdef0123456789abcdef';
const POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379/0';

type Mode = 'embedded' | 'scaleout';

interface Options {
  mode: Mode;
  sizes: number[];
  duration: number;
  warmup: number;
  rounds: number;
  connections: number;
  output?: string;
}

interface Endpoint {
  name: string;
  path: string;
}

interface Measurement extends Endpoint {
  size: number;
  requestsPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  ok: number;
  notOk: number;
  errors: number;
  statusCounts: Record<string, number>;
  meanResponseBytes: number;
  /** The bare endpoint measured right before this one. */
  bareRequestsPerSecond: number;
  bareP99: number;
  /** requestsPerSecond / bareRequestsPerSecond. */
  ratioToBare: number;
  /** With several rounds, each of them (the fields above are their medians; max is the largest). */
  rounds?: Array<{ requestsPerSecond: number; p99: number; bareRequestsPerSecond: number }>;
}

function parseOptions(argv: string[]): Options {
  const program = new Command()
    .name('bench:lists')
    .option('--mode <mode>', 'embedded (SQLite) or scaleout (PostgreSQL + Redis)', benchMode, 'embedded')
    .option('--sizes <list>', 'comma-separated stored message counts, ascending', (value) => value.split(',').map((part) => positiveInteger(part.trim())), [10_000, 100_000, 1_000_000])
    .option('--duration <seconds>', 'measured load per endpoint', positiveInteger, 5)
    .option('--warmup <seconds>', 'unmeasured load per endpoint before measuring', positiveInteger, 1)
    .option('--rounds <n>', 'measurements of every endpoint per size; the table shows their medians', positiveInteger, 3)
    .option('--connections <n>', 'concurrent keep-alive clients', positiveInteger, 10)
    .option('--output <file>', 'JSON results file (default bench/results/lists-<mode>.json)')
    .parse(argv);
  const options = program.opts<Options>();
  options.sizes = [...new Set(options.sizes)].sort((a, b) => a - b);
  return options;
}

function messageEndpoints(probes: SeedProbes): Endpoint[] {
  const q = encodeURIComponent;
  return [
    { name: 'messages: unfiltered', path: '/v1/messages' },
    { name: 'messages: subscriberId', path: `/v1/messages?subscriberId=${q(probes.subscriberId)}` },
    { name: 'messages: channel', path: `/v1/messages?channel=${probes.channel}` },
    { name: 'messages: transactionId', path: `/v1/messages?transactionId=${q(probes.transactionId)}` },
    { name: 'messages: contextKeys', path: `/v1/messages?contextKeys=${q(probes.contextKey)}` },
    { name: 'messages: page 5', path: '/v1/messages?page=5' },
  ];
}

function notificationEndpoints(probes: SeedProbes): Endpoint[] {
  const q = encodeURIComponent;
  return [
    { name: 'notifications: unfiltered', path: '/v1/notifications' },
    { name: 'notifications: subscriberIds', path: `/v1/notifications?subscriberIds=${q(probes.subscriberId)}` },
    { name: 'notifications: channels', path: `/v1/notifications?channels=${probes.channel}` },
    { name: 'notifications: transactionId', path: `/v1/notifications?transactionId=${q(probes.transactionId)}` },
    { name: 'notifications: topicKey', path: `/v1/notifications?topicKey=${q(probes.topicKey)}` },
    { name: 'notifications: after/before', path: `/v1/notifications?after=${q(probes.after)}&before=${q(probes.before)}` },
  ];
}

/** A valid JSON document of exactly 2,048 bytes, the reference payload. */
export function constantJson(bytes = 2048): string {
  const items = Array.from({ length: 12 }, (_, i) => ({ id: i.toString(16).padStart(24, '0'), name: `item ${i}`, text: 'x'.repeat(60) }));
  const base = JSON.stringify({ data: items, pad: '' });
  if (base.length > bytes) throw new Error('reference payload larger than requested size');
  return JSON.stringify({ data: items, pad: 'p'.repeat(bytes - base.length) });
}

/** Bytes of the second reference: a constant JSON as large as a full list page (14–18 KB). */
const PAGE_SIZED_BYTES = 16 * 1024;

/**
 * The bare routes: `url` answers the constant 2 KB reference; `pageSizedUrl` a constant as large as a list page,
 * which shows how much of the gap to the 2 KB route is the response's size alone (no database, no serialisation).
 */
async function startBareEndpoint(): Promise<{ url: string; pageSizedUrl: string; close(): Promise<void> }> {
  const body = constantJson();
  const pageSized = constantJson(PAGE_SIZED_BYTES);
  const app = Fastify({ logger: false });
  app.get('/constant', async (_request, reply) => reply.type('application/json').send(body));
  app.get('/constant-page-sized', async (_request, reply) => reply.type('application/json').send(pageSized));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `${url}/constant`, pageSizedUrl: `${url}/constant-page-sized`, close: () => app.close() };
}

interface Target {
  container: Container;
  app: FastifyInstance;
  url: string;
  environmentId: string;
  organizationId: string;
  dialect: 'sqlite' | 'postgres';
  close(): Promise<void>;
}

async function startTarget(mode: Mode): Promise<Target> {
  const suffix = randomBytes(5).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-lists-'));
  let schema: string | undefined;
  const env: Record<string, string> = {
    HERALD_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
    HERALD_RATE_LIMIT: 'false',
  };
  if (mode === 'scaleout') {
    schema = `herald_bench_${suffix}`;
    await withPostgres((client) => client.query(`create schema ${schema}`));
    env.DATABASE_URL = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    env.REDIS_URL = REDIS_URL;
  }
  const config = loadConfig(env);
  const container = await createContainer(config, { redisPrefix: `herald_bench_${suffix}` });
  const { deps } = container;
  await bootstrapTenancy(deps, { bootstrapSecretKey: SECRET });
  const environment = await deps.store.tenancy.findEnvironmentByName('development');
  if (!environment) throw new Error('bootstrap did not create the development environment');
  const app = await buildApp(deps, { logger: deps.logger });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    container,
    app,
    url,
    environmentId: environment._id,
    organizationId: environment._organizationId,
    dialect: mode === 'scaleout' ? 'postgres' : 'sqlite',
    async close() {
      await app.close();
      await container.close();
      if (schema) await withPostgres((client) => client.query(`drop schema if exists ${schema} cascade`));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function withPostgres<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Fails fast when an endpoint does not answer 200 with data, so a broken route never shows as "fast". */
async function checkEndpoint(target: Target, endpoint: Endpoint): Promise<void> {
  const response = await fetch(`${target.url}${endpoint.path}`, { headers: { authorization: `ApiKey ${SECRET}` } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${endpoint.name}: ${response.status} ${text.slice(0, 500)}`);
  const body = JSON.parse(text) as { data?: unknown[] };
  if (!Array.isArray(body.data) || body.data.length === 0) throw new Error(`${endpoint.name}: no data in ${text.slice(0, 300)}`);
}

async function measure(url: string, options: Options, headers: Record<string, string>): Promise<HttpLoadResult> {
  if (options.warmup > 0) await runHttpLoad({ url, headers, connections: options.connections, durationSeconds: options.warmup });
  return runHttpLoad({ url, headers, connections: options.connections, durationSeconds: options.duration });
}

function toMeasurement(endpoint: Endpoint, size: number, result: HttpLoadResult, bare: HttpLoadResult): Measurement {
  return {
    ...endpoint,
    size,
    requestsPerSecond: round(result.requestsPerSecond, 0),
    p50: round(result.latencyMs.p50, 2),
    p90: round(result.latencyMs.p90, 2),
    p99: round(result.latencyMs.p99, 2),
    max: round(result.latencyMs.max, 2),
    ok: result.ok,
    notOk: result.notOk,
    errors: result.errors,
    statusCounts: result.statusCounts,
    meanResponseBytes: Math.round(result.meanResponseBytes),
    bareRequestsPerSecond: round(bare.requestsPerSecond, 0),
    bareP99: round(bare.latencyMs.p99, 2),
    ratioToBare: round(result.requestsPerSecond / bare.requestsPerSecond, 3),
  };
}

const BARE_NAME = 'bare Fastify 2 KB (median of runs)';
const PAGE_SIZED_ENDPOINT: Endpoint = { name: `bare Fastify ${PAGE_SIZED_BYTES / 1024} KB (a page's size, no work)`, path: '/constant-page-sized' };

/** The bare endpoint's row for a size: the median run by throughput. */
function bareSummary(size: number, runs: HttpLoadResult[]): Measurement {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const middle = sorted[Math.floor(sorted.length / 2)];
  return toMeasurement({ name: BARE_NAME, path: '/constant' }, size, middle, middle);
}

/**
 * One endpoint's rounds as one row: the median of each figure taken separately (a round that shared the machine
 * with something else, e.g. the disk still writing out the rows just seeded, moves none of them), the largest max.
 */
function medianOfRounds(rounds: Measurement[]): Measurement {
  if (rounds.length === 1) return rounds[0];
  const medianOf = (pick: (m: Measurement) => number) => median(rounds.map(pick));
  const statusCounts: Record<string, number> = {};
  for (const m of rounds) for (const [status, count] of Object.entries(m.statusCounts)) statusCounts[status] = (statusCounts[status] ?? 0) + count;
  return {
    name: rounds[0].name,
    path: rounds[0].path,
    size: rounds[0].size,
    requestsPerSecond: round(medianOf((m) => m.requestsPerSecond), 0),
    p50: round(medianOf((m) => m.p50), 2),
    p90: round(medianOf((m) => m.p90), 2),
    p99: round(medianOf((m) => m.p99), 2),
    max: Math.max(...rounds.map((m) => m.max)),
    ok: rounds.reduce((sum, m) => sum + m.ok, 0),
    notOk: rounds.reduce((sum, m) => sum + m.notOk, 0),
    errors: rounds.reduce((sum, m) => sum + m.errors, 0),
    statusCounts,
    meanResponseBytes: Math.round(medianOf((m) => m.meanResponseBytes)),
    bareRequestsPerSecond: round(medianOf((m) => m.bareRequestsPerSecond), 0),
    bareP99: round(medianOf((m) => m.bareP99), 2),
    ratioToBare: round(medianOf((m) => m.ratioToBare), 3),
    rounds: rounds.map((m) => ({ requestsPerSecond: m.requestsPerSecond, p99: m.p99, bareRequestsPerSecond: m.bareRequestsPerSecond })),
  };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

function formatCount(n: number): string {
  return n >= 1_000_000 && n % 1_000_000 === 0 ? `${n / 1_000_000}M` : n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
}

/** Markdown: one row per endpoint, columns per size; then the two targets at the largest size. */
function markdownTable(measurements: Measurement[], sizes: number[]): string {
  const references = [BARE_NAME, PAGE_SIZED_ENDPOINT.name];
  const names = [...references, ...new Set(measurements.map((m) => m.name).filter((name) => !references.includes(name)))];
  const header = ['endpoint', ...sizes.map((s) => `${formatCount(s)} req/s (×bare)`), ...sizes.map((s) => `${formatCount(s)} p50/p99 ms`)];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const name of names) {
    const bySize = new Map(measurements.filter((m) => m.name === name).map((m) => [m.size, m]));
    const rps = sizes.map((s) => {
      const m = bySize.get(s);
      return m ? (name === BARE_NAME ? `${m.requestsPerSecond}` : `${m.requestsPerSecond} (${m.ratioToBare.toFixed(2)})`) : '';
    });
    const lat = sizes.map((s) => {
      const m = bySize.get(s);
      return m ? `${m.p50} / ${m.p99}` : '';
    });
    lines.push(`| ${name} | ${rps.join(' | ')} | ${lat.join(' | ')} |`);
  }
  return lines.join('\n');
}

function targetsTable(measurements: Measurement[], sizes: number[]): string {
  const smallest = sizes[0];
  const largest = sizes[sizes.length - 1];
  const lines = [
    `| endpoint | ×bare at ${formatCount(largest)} (target ≥ 0.50) | p99 ${formatCount(largest)} / p99 ${formatCount(smallest)} (target ≤ 1.5) | verdict |`,
    '|---|---|---|---|',
  ];
  for (const name of [...new Set(measurements.map((m) => m.name))].filter((n) => n !== BARE_NAME && n !== PAGE_SIZED_ENDPOINT.name)) {
    const small = measurements.find((m) => m.name === name && m.size === smallest);
    const large = measurements.find((m) => m.name === name && m.size === largest);
    if (!small || !large) continue;
    const growth = large.p99 / small.p99;
    const verdict = large.ratioToBare >= 0.5 && growth <= 1.5 ? 'met' : large.ratioToBare < 0.5 && growth > 1.5 ? 'both missed' : large.ratioToBare < 0.5 ? 'throughput missed' : 'p99 growth missed';
    lines.push(`| ${name} | ${large.ratioToBare.toFixed(2)} | ${growth.toFixed(2)} | ${verdict} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  const log = (message: string) => process.stderr.write(`[bench:lists ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
  log(`mode ${options.mode}, sizes ${options.sizes.join(', ')}, ${options.connections} connections, ${options.rounds} rounds of ${options.warmup}+${options.duration} s per endpoint`);

  const target = await startTarget(options.mode);
  const bare = await startBareEndpoint();
  const headers = { authorization: `ApiKey ${SECRET}` };
  const measurements: Measurement[] = [];
  const seeding: Array<{ size: number; seconds: number }> = [];
  const loadAverages: Array<{ size: number; loadAverage1m: number }> = [];
  try {
    const { db } = target.container;
    const plan = createSeedPlan(target.environmentId, target.organizationId, { maxRows: options.sizes[options.sizes.length - 1] });
    await seedSubscribers(db, target.container.deps.store, plan);
    let seeded = 0;
    for (const size of options.sizes) {
      const seedStarted = Date.now();
      let lastLog = 0;
      await seedListRows(db, plan, seeded, size, {
        dialect: target.dialect,
        onProgress: ({ done, total, elapsedMs }) => {
          if (elapsedMs - lastLog < 10_000 && done < total) return;
          lastLog = elapsedMs;
          log(`seeding to ${formatCount(size)}: ${done}/${total} rows in ${Math.round(elapsedMs / 1000)} s`);
        },
      });
      // PostgreSQL: what autovacuum would have done by then (statistics, visibility map for index-only scans), and a
      // checkpoint, so less of the seeding's writing (gigabytes at 1M) is still pending when the measurements start;
      // what remains is absorbed by the rounds. CHECKPOINT needs a superuser or pg_checkpoint: skipped without.
      if (target.dialect === 'postgres') {
        await vacuumAnalyzeOwnSchema({
          run: async (text) => void (await sql.raw(text).execute(db)),
          rows: async <T>(text: string) => (await sql.raw(text).execute(db)).rows as T[],
        });
        await sql`checkpoint`.execute(db).catch((error: unknown) => log(`no checkpoint after seeding: ${(error as Error).message}`));
      }
      seeding.push({ size, seconds: round((Date.now() - seedStarted) / 1000, 1) });
      seeded = size;
      log(`seeded ${formatCount(size)} messages and events in ${seeding[seeding.length - 1].seconds} s`);

      const probes = seedProbes(plan, size);
      const endpoints = [...messageEndpoints(probes), ...notificationEndpoints(probes)];
      for (const endpoint of endpoints) await checkEndpoint(target, endpoint);

      // The bare endpoint is measured right before each list endpoint, so a change in machine load during
      // the run (other processes on the 2 cores) moves both figures of a pair together.
      loadAverages.push({ size, loadAverage1m: round(loadavg()[0], 2) });
      // Every endpoint once per round, so a passing disturbance hits one round of a few endpoints, not all rounds
      // of one. The page-sized constant is paired like the lists.
      const bareRuns: HttpLoadResult[] = [];
      const roundsByEndpoint = new Map<string, Measurement[]>();
      for (let roundIndex = 1; roundIndex <= options.rounds; roundIndex++) {
        for (const endpoint of [...endpoints, PAGE_SIZED_ENDPOINT]) {
          const bareResult = await measure(bare.url, options, {});
          bareRuns.push(bareResult);
          const url = endpoint === PAGE_SIZED_ENDPOINT ? bare.pageSizedUrl : `${target.url}${endpoint.path}`;
          const result = await measure(url, options, endpoint === PAGE_SIZED_ENDPOINT ? {} : headers);
          const measurement = toMeasurement(endpoint, size, result, bareResult);
          roundsByEndpoint.set(endpoint.name, [...(roundsByEndpoint.get(endpoint.name) ?? []), measurement]);
          log(
            `${formatCount(size)} round ${roundIndex}/${options.rounds} ${endpoint.name}: ${measurement.requestsPerSecond} req/s ` +
              `(${measurement.ratioToBare.toFixed(2)}× bare ${measurement.bareRequestsPerSecond}), p50 ${measurement.p50} ms, p99 ${measurement.p99} ms` +
              `${measurement.notOk || measurement.errors ? `, NOT OK ${JSON.stringify(measurement.statusCounts)} errors ${measurement.errors}` : ''}`,
          );
        }
      }
      measurements.push(bareSummary(size, bareRuns));
      for (const rounds of roundsByEndpoint.values()) measurements.push(medianOfRounds(rounds));
    }
  } finally {
    // The load generator stops on its deadline while the server may still be answering requests it had
    // already read; let the slowest of them finish before the database is closed under them.
    const slowestMs = Math.max(0, ...measurements.map((m) => m.max).filter(Number.isFinite));
    await new Promise((resolve) => setTimeout(resolve, Math.min(15_000, slowestMs + 500)));
    await bare.close();
    await target.close();
  }

  const results = {
    date: new Date().toISOString(),
    mode: options.mode,
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version, platform: process.platform },
    settings: { sizes: options.sizes, durationSeconds: options.duration, warmupSeconds: options.warmup, rounds: options.rounds, connections: options.connections },
    seeding,
    loadAverages,
    measurements,
  };
  const output = options.output ?? join(here, 'results', `lists-${options.mode}.json`);
  mkdirSync(dirname(output), { recursive: true });
  writeFileSync(output, JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(`\n${markdownTable(measurements, options.sizes)}\n\n${targetsTable(measurements, options.sizes)}\n\nwritten to ${output}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
