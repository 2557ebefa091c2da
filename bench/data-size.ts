import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import pg from 'pg';
import { startHerald, type HeraldProcess } from '../test/helpers/herald-process.js';
import { startScaleoutProcesses, SCALEOUT_SECRET, type ScaleoutProcesses } from '../test/helpers/scaleout-processes.js';
import { buildServer } from '../scripts/build-server.mjs';
import { positiveInteger } from './lib/cli-options.js';
import { cpuPerOperation, findGroups, niceOf, readCpu } from './lib/process-cpu.js';
import { loadConfig } from '../src/config.js';
import { postgresObjects, type StorageObject } from './lib/storage-breakdown.js';
import { acquireLock, api, createInAppWorkflow, inAppMessageCount, load, round1, waitForMessages, type LoadResult } from './lib/bench-client.js';
import {
  growClones,
  openPostgresSeedConnection,
  openSqliteSeedConnection,
  prepareCloneSeed,
  seededMessages,
  type CloneSeedState,
  type SeedConnection,
} from './lib/clone-seed.js';

/**
 * `npm run bench:data-size` (issue 24 point 4): how list latency and trigger rate change with the stored data, at 100k,
 * 1M (and, opt-in, 10M) stored messages, embedded and scaled out.
 *
 * Herald runs as bench/http.ts runs it (the compiled build; `herald start` embedded over a temp data directory; `herald
 * migrate`, `herald api` and `herald worker` over a schema of its own in PostgreSQL `test` and a private Redis scaled
 * out). It delivers `--subscribers` real triggers (one in-app message per subscriber), which bench/lib/clone-seed.ts
 * then copies in SQL up to each size (events, jobs, execution details, messages and the message counters), so every
 * subscriber holds size / subscribers messages. Embedded, Herald is stopped while the seed writes and started again.
 * At each size, autocannon (a process of its own, `--connections`) measures for `--duration` s each, after `--warmup` s:
 *   messages first   GET /v1/messages?subscriberId=<each subscriber in turn>&limit=10 (page 0)
 *   messages deep    the same at the page in the middle of a subscriber's messages
 *   notifications first / deep   GET /v1/notifications?limit=10&page=<0..9 | 1000..1009 in turn>
 *   triggers         POST /v1/events/trigger to a new subscriber per request: accepted/s, then deliveries/s
 * The data set grows in place from one size to the next and is deleted at the end of each mode.
 * Each load also reports CPU ms per operation of each process (embedded the one process; scaled out the API, the
 * worker, their PostgreSQL backends and Redis, as bench:http), and the load average when it began: rates follow the
 * shared machine, CPU per operation much less. Since session 27 Herald runs as bench:http runs it, with LOG_LEVEL info
 * and the worker at Herald's default niceness (19); `--log-level warn --worker-nice 0` gives the conditions of
 * sessions 16-26, whose worker delivered during the trigger load and took the cores from the API (BENCHMARKS.md,
 * session 27). `--triggers-only` skips the list loads.
 *
 *   npm run bench:data-size -- [--modes embedded,scaleout] [--sizes 100k,1m[,10m]] [--duration 5] [--lock /tmp/herald-bench.lock]
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_data_size_0123456789abcdef0123456789ab';
const WORKFLOW = 'bench-data-size';
type Mode = 'embedded' | 'scaleout';

interface Options {
  modes: Mode[];
  sizes: number[];
  duration: number;
  warmup: number;
  connections: number;
  subscribers: number;
  notificationDeepPage: number;
  maxDiskGb: number;
  keepFreeGb?: number;
  holdWhile?: string;
  fromSource: boolean;
  lock?: string;
  output?: string;
  keepData?: string;
  logLevel: string;
  workerNice?: string;
  triggersOnly: boolean;
  vacuum: boolean;
}

function size(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(value.trim());
  if (!match) throw new InvalidArgumentError(`${value}: a count like 100k, 1m or 250000`);
  const unit = match[2]!.toLowerCase();
  return Math.round(Number(match[1]) * (unit === 'k' ? 1e3 : unit === 'm' ? 1e6 : 1));
}

function parseOptions(argv: string[]): Options {
  const options = new Command()
    .name('bench:data-size')
    .option('--modes <list>', 'embedded,scaleout (either or both)', (value) => value.split(',').map((mode) => {
      if (mode !== 'embedded' && mode !== 'scaleout') throw new InvalidArgumentError('modes are embedded and scaleout');
      return mode as Mode;
    }), ['embedded', 'scaleout'] as Mode[])
    .option('--sizes <list>', 'stored messages, ascending (10m takes long: see BENCHMARKS.md)', (value) => value.split(',').map(size), [100_000, 1_000_000])
    .option('--duration <seconds>', 'seconds of measured load per endpoint', positiveInteger, 5)
    .option('--warmup <seconds>', 'seconds of unmeasured load per endpoint first', positiveInteger, 1)
    .option('--connections <n>', 'autocannon connections', positiveInteger, 50)
    .option('--subscribers <n>', 'subscribers (= template messages) the data is spread over', positiveInteger, 1000)
    .option('--notification-deep-page <n>', 'the deep page of GET /v1/notifications (limit 10)', positiveInteger, 1000)
    .option('--max-disk-gb <n>', 'skip a size whose estimated data set is larger', positiveInteger, 15)
    .option('--keep-free-gb <n>', 'skip a size whose growth would leave less free disk than this (instead of the 80 % rule), and stop a seed that gets there (PostgreSQL: its statement is cancelled)', positiveInteger)
    .option('--hold-while <file>', 'after the last size, keep Herald and its data while this file exists (for EXPLAIN by hand; the URL is logged)')
    .option('--from-source', 'run Herald from the sources through tsx instead of the compiled build', false)
    .option('--lock <file>', 'hold this flock only while measuring (e.g. /tmp/herald-bench.lock), not while seeding')
    .option('--output <file>', 'results file (default bench/results/data-size.json)')
    .option('--log-level <level>', "Herald's LOG_LEVEL: info, npm start's default and bench:http's (before session 27 this bench ran warn)", 'info')
    .option('--worker-nice <n>', "scaled out: the worker's HERALD_WORKER_NICE (default: the environment's, else Herald's default as bench:http runs it; before session 27 this bench ran 0)")
    .option('--triggers-only', 'at each size the trigger load alone, no list loads', false)
    .option('--no-vacuum', 'PostgreSQL: no VACUUM (ANALYZE) of the seeded tables after a seed (their statistics as autovacuum left them)')
    .option('--keep-data <dir>', 'embedded: the data directory, kept at the end and reused by the next run with the same option (its seed state in seed-state.json)')
    .parse(['node', 'bench:data-size', ...argv])
    .opts<Options>();
  const sorted = [...options.sizes].sort((a, b) => a - b);
  if (sorted.some((value, i) => value !== options.sizes[i])) throw new InvalidArgumentError('--sizes must be ascending');
  return options;
}

const log = (message: string) => console.log(`[bench:data-size ${new Date().toISOString().slice(11, 19)}] ${message}`);
/** Writes the results file (set by main): after every size, so a long run that is stopped keeps what it measured. */
let persist: () => void = () => undefined;
/** Sizes not measured, and why. */
const skippedSizes: string[] = [];

function freeDiskBytes(path: string): number {
  const fields = execFileSync('df', ['-B1', '--output=avail', path], { encoding: 'utf8' }).trim().split('\n');
  return Number(fields.at(-1));
}
const label = (n: number) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

/** Herald in one mode, restartable (embedded: stopped while the seed writes its SQLite file). */
interface Target {
  url(): string;
  key: string;
  openSeed(): Promise<SeedConnection & { close(): Promise<void> }>;
  /** Around a seed: embedded stops Herald before and starts it after; scaled out it keeps running. */
  pauseForSeed(): Promise<void>;
  resumeAfterSeed(): Promise<void>;
  diskBytes(): Promise<number>;
  /** PostgreSQL: the schema's relations and their sizes. */
  objects(): Promise<StorageObject[] | undefined>;
  /** The Herald processes' pids (scaled out: api and worker), and Redis's port, for CPU per operation. */
  cpuProcesses(): Record<string, number>;
  redisPort: number;
  /** Scaled out: the worker's niceness as running. */
  workerNice?: number;
  /** A path on the disk the data lives on (for df). */
  dataPath: string;
  databaseUrl?: string;
  close(): Promise<void>;
}

async function startTarget(mode: Mode, options: Options): Promise<Target> {
  const common = { HERALD_FROM_SOURCE: options.fromSource ? '1' : '', LOG_LEVEL: options.logLevel };
  if (mode === 'embedded') {
    const dataDir = options.keepData ?? mkdtempSync(join(tmpdir(), 'herald-bench-data-size-'));
    mkdirSync(dataDir, { recursive: true });
    const env = { ...common, HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: SECRET };
    let herald: HeraldProcess | undefined = await startHerald(env);
    return {
      url: () => herald!.url,
      key: SECRET,
      openSeed: () => openSqliteSeedConnection(join(dataDir, 'herald.sqlite')),
      async pauseForSeed() { await herald?.stop(); herald = undefined; },
      async resumeAfterSeed() { herald = await startHerald(env); },
      async diskBytes() { return Number(execFileSync('du', ['-sb', dataDir], { encoding: 'utf8' }).split('\t')[0]); },
      async objects() { return undefined; },
      cpuProcesses: () => ({ herald: herald!.child.pid! }),
      redisPort: -1,
      dataPath: dataDir,
      async close() {
        await herald?.stop();
        if (!options.keepData) rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  // The worker at Herald's default priority, as bench:http runs it (the test helper runs it at 0). At 0 it delivers
  // during the trigger load and takes the cores from the API: session 27 measured the accepted rate ~1.4-2.5× lower.
  const nice = options.workerNice ?? process.env.HERALD_WORKER_NICE ?? String(loadConfig({}).worker.nice);
  const processes: ScaleoutProcesses = await startScaleoutProcesses({ apis: 1, workers: 1, env: { ...common, HERALD_QUEUE_POLL_MS: '200', HERALD_WORKER_NICE: nice } });
  const databaseUrl = processes.env.DATABASE_URL!;
  return {
    cpuProcesses: () => ({ api: processes.apis[0]!.child.pid!, worker: processes.workers[0]!.child.pid! }),
    redisPort: Number(new URL(processes.env.REDIS_URL!).port),
    workerNice: niceOf(processes.workers[0]!.child.pid!),
    url: () => processes.apis[0]!.url,
    key: SCALEOUT_SECRET,
    openSeed: () => openPostgresSeedConnection(databaseUrl),
    async pauseForSeed() {},
    async resumeAfterSeed() {},
    dataPath: '/var/lib/postgresql',
    databaseUrl,
    async objects() {
      const seed = await openPostgresSeedConnection(databaseUrl);
      try {
        return await postgresObjects(seed);
      } finally {
        await seed.close();
      }
    },
    async diskBytes() {
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query(`select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes
          from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind = 'r'`);
        return Number(rows[0].bytes);
      } finally {
        await client.end();
      }
    },
    close: () => processes.close(),
  };
}

type CpuPerOperation = Record<string, { cpuMs: number; msPerOperation: number; processes: number }>;

interface EndpointResult {
  path: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  statusCounts: Record<string, number>;
  /** CPU ms per request of the timed load: embedded the one process; scaled out the API, the worker, their PostgreSQL backends, Redis. */
  cpuPerRequest: CpuPerOperation;
  /** The 1-minute load average when the timed load began (the machine is shared). */
  loadAverage: number;
}

/** CPU of the Herald processes (and scaled out their PostgreSQL backends and Redis) from now until the returned call. */
function cpuMeter(target: Target): (operations: number) => CpuPerOperation {
  const groups = () => findGroups(target.cpuProcesses(), 5432, target.redisPort);
  const atStart = groups();
  const before = readCpu(atStart);
  return (operations) => {
    const later = groups();
    const merged = Object.fromEntries(Object.keys({ ...atStart, ...later }).map((name) => [name, [...new Set([...(atStart[name] ?? []), ...(later[name] ?? [])])]]));
    return cpuPerOperation(before, readCpu(merged), operations);
  };
}

const cpuText = (cpu: CpuPerOperation) => Object.entries(cpu).filter(([, c]) => c.processes > 0).map(([name, c]) => `${name} ${c.msPerOperation}`).join(', ');

async function measureList(target: Target, options: Options, paths: string[]): Promise<EndpointResult> {
  const common = { kind: 'rotate', url: target.url(), paths, connections: options.connections, headers: { authorization: `ApiKey ${target.key}` } };
  await load({ ...common, durationSeconds: options.warmup });
  const loadAverage = round1(loadavg()[0]!);
  const cpu = cpuMeter(target);
  const result: LoadResult = await load({ ...common, durationSeconds: options.duration });
  const cpuPerRequest = cpu(result.ok + result.notOk);
  log(`${paths[0]}: ${Math.round(result.requestsPerSecond)} req/s (load ${loadAverage}); CPU ms per request ${cpuText(cpuPerRequest)}`);
  return { path: paths[0]!, requestsPerSecond: Math.round(result.requestsPerSecond), p50: round1(result.latencyMs.p50), p99: round1(result.latencyMs.p99), statusCounts: result.statusCounts, cpuPerRequest, loadAverage };
}

interface TriggerResult {
  acceptedPerSecond: number;
  p99: number;
  deliveriesPerSecond: number;
  statusCounts: Record<string, number>;
  /** CPU ms per accepted trigger during the load, and per trigger with its delivery until the last delivery (as bench:http). */
  cpuPerTrigger: { duringTriggerLoad: CpuPerOperation; triggerAndDelivery: CpuPerOperation };
  loadAverage: number;
}

async function measureTriggers(target: Target, options: Options): Promise<TriggerResult> {
  const before = await inAppMessageCount(target.url(), target.key);
  const loadAverage = round1(loadavg()[0]!);
  const duringLoad = cpuMeter(target);
  const withDelivery = cpuMeter(target);
  const started = Date.now();
  const result = await load({
    kind: 'trigger', url: target.url(), connections: options.connections, durationSeconds: options.duration,
    headers: { authorization: `ApiKey ${target.key}` }, workflowId: WORKFLOW, subscriberPrefix: `load-${Date.now().toString(36)}`,
  });
  const accepted = result.statusCounts['201'] ?? 0;
  const cpuDuringLoad = duringLoad(accepted);
  const delivered = await waitForMessages(target.url(), target.key, before + accepted, 600_000);
  const cpuPerTrigger = { duringTriggerLoad: cpuDuringLoad, triggerAndDelivery: withDelivery(delivered.count - before) };
  log(`triggers: ${Math.round(result.requestsPerSecond)}/s (load ${loadAverage}); CPU ms per accepted trigger during the load ${cpuText(cpuPerTrigger.duringTriggerLoad)}; per trigger with its delivery ${cpuText(cpuPerTrigger.triggerAndDelivery)}`);
  return {
    cpuPerTrigger,
    loadAverage,
    acceptedPerSecond: Math.round(result.requestsPerSecond),
    p99: round1(result.latencyMs.p99),
    deliveriesPerSecond: Math.round(((delivered.count - before) * 1000) / (delivered.at - started)),
    statusCounts: result.statusCounts,
  };
}

interface SizeResult {
  mode: Mode;
  logLevel: string;
  workerNice?: number;
  messages: number;
  seedSeconds: number;
  /** PostgreSQL: of seedSeconds, the secondary indexes' builds and the primary keys' rebuilds after the copies. */
  indexSeconds: number;
  /** PostgreSQL: of seedSeconds, VACUUM (ANALYZE) of the seeded tables. */
  vacuumSeconds: number;
  lowestFreeDiskBytes: number;
  /** PostgreSQL: each heap, TOAST and index of the schema after the seed. */
  objects?: StorageObject[];
  /** The load average when the size's measurement began. */
  load: number[];
  diskBytes: number;
  messagesPerSubscriber: number;
  /** Absent with --triggers-only. */
  messagesFirst?: EndpointResult;
  messagesDeep?: EndpointResult & { page: number };
  notificationsFirst?: EndpointResult;
  notificationsDeep?: EndpointResult & { page: number };
  triggers: TriggerResult;
  at: string;
}

async function runMode(mode: Mode, options: Options, results: SizeResult[]): Promise<void> {
  log(`${mode}: starting Herald`);
  const target = await startTarget(mode, options);
  log(`${mode}: LOG_LEVEL ${options.logLevel}${target.workerNice !== undefined ? `, worker niceness ${target.workerNice}` : ''}`);
  // What still differs from bench:http (session 27): compare the rates of the two only with these in mind, and their
  // CPU per operation, which the machine's load moves less.
  log(`${mode}: unlike bench:http: ${options.duration} s per load (bench:http 10), ${options.warmup} s of warm-up per list (none), ` +
    `messages page 0 or the middle page of ${options.subscribers} subscribers holding size/${options.subscribers} messages each (bench:http: pages 0 and 1 of 300 subscribers with 12), ` +
    `${options.triggersOnly ? '' : 'the trigger load after the list loads (first), '}no round-trip counter preloaded`);
  // --keep-data: a directory seeded by an earlier run is grown from its recorded state (its templates delivered then).
  const statePath = mode === 'embedded' && options.keepData ? join(options.keepData, 'seed-state.json') : undefined;
  let state: CloneSeedState | undefined = statePath && existsSync(statePath) ? (JSON.parse(readFileSync(statePath, 'utf8')) as CloneSeedState) : undefined;
  try {
    const subscribers = Array.from({ length: options.subscribers }, (_, i) => `size-subscriber-${i}`);
    if (state) {
      log(`${mode}: reusing ${options.keepData} (${label(seededMessages(state))} messages seeded)`);
    } else {
      await createInAppWorkflow(target.url(), target.key, WORKFLOW);
      for (let i = 0; i < subscribers.length; i += 100) {
        await api(target.url(), target.key, 'POST', '/v1/events/trigger', { name: WORKFLOW, to: subscribers.slice(i, i + 100), payload: { n: i, text: 'hi' } });
      }
      await waitForMessages(target.url(), target.key, subscribers.length, 300_000);
      log(`${mode}: ${subscribers.length} template messages delivered`);
    }

    let bytesPerMessage: number | undefined;
    for (const messages of options.sizes) {
      // The machine is shared: grow only when the estimate from the last size fits the budget (Herald stores several
      // KB per delivered message: the event, its job and execution details, the message document, a dozen indexes).
      if (bytesPerMessage !== undefined && state) {
        const needed = bytesPerMessage * messages;
        const free = freeDiskBytes(target.dataPath);
        const growth = needed - bytesPerMessage * seededMessages(state);
        const fits = options.keepFreeGb === undefined ? growth <= free * 0.8 : growth <= free - options.keepFreeGb * 1e9;
        if (needed > options.maxDiskGb * 1e9 || !fits) {
          const rule = options.keepFreeGb === undefined ? 'at most 80 % of the free space' : `--keep-free-gb ${options.keepFreeGb}`;
          const skipped = `${label(messages)}: skipped, it would take ~${(needed / 1e9).toFixed(1)} GB (${Math.round(bytesPerMessage)} bytes per message measured at ${label(seededMessages(state))}; --max-disk-gb ${options.maxDiskGb}, ${rule}, ${(free / 1e9).toFixed(1)} GB free)`;
          log(`${mode} ${skipped}`);
          skippedSizes.push(`${mode} ${skipped}`);
          persist();
          break;
        }
      }
      await target.pauseForSeed();
      const seedStarted = Date.now();
      const seed = await target.openSeed();
      let lowestFree = freeDiskBytes(target.dataPath);
      let diskStop: string | undefined;
      // Stops the seed if the disk gets too full (the machine's disk is shared): checked every 2 s, since a batch or an
      // index build writes gigabytes between two progress reports.
      const watchdog = setInterval(() => {
        const free = freeDiskBytes(target.dataPath);
        lowestFree = Math.min(lowestFree, free);
        if (options.keepFreeGb !== undefined && free < options.keepFreeGb * 1e9 && !diskStop) {
          diskStop = `${label(messages)}: stopped while seeding, ${(free / 1e9).toFixed(1)} GB free (--keep-free-gb ${options.keepFreeGb})`;
          log(`${mode} ${diskStop}`);
          void seed.cancel?.();
        }
      }, 2_000);
      let indexSeconds = 0;
      let vacuumSeconds = 0;
      try {
        if (!state) {
          const [environment] = await seed.rows<{ environment_id: string }>(`select environment_id from messages limit 1`);
          state = await prepareCloneSeed(seed, environment!.environment_id);
        }
        if (seededMessages(state) >= messages) log(`${mode}: ${label(seededMessages(state))} messages already seeded`);
        let lastLog = 0;
        state = await growClones(seed, state, messages, {
          onIndexes: (built) => {
            indexSeconds += built.elapsedMs / 1000;
            log(`${mode}: index ${built.index} built in ${(built.elapsedMs / 1000).toFixed(1)} s`);
          },
          onProgress: (progress) => {
            if (Date.now() - lastLog < 15_000 && progress.copies < progress.target) return;
            lastLog = Date.now();
            log(`${mode}: seeded ${label(progress.messages)} / ${label(messages)} messages in ${Math.round(progress.elapsedMs / 1000)} s`);
          },
        });
        // PostgreSQL plans from statistics that autovacuum would refresh some time after a bulk load, and autovacuum
        // would also vacuum the inserted rows (visibility map, hint bits) some time later, maybe while the bench
        // measures: both now, table by table (never the whole database).
        if (seed.dialect === 'postgres' && options.vacuum) {
          const started = Date.now();
          for (const table of ['notifications', 'jobs', 'execution_details', 'messages', 'message_counters']) await seed.run(`vacuum (analyze) ${table}`);
          vacuumSeconds = Math.round((Date.now() - started) / 1000);
          log(`${mode}: vacuum (analyze) of the seeded tables in ${vacuumSeconds} s`);
        }
        if (statePath) writeFileSync(statePath, JSON.stringify(state));
      } catch (error) {
        if (diskStop) {
          skippedSizes.push(`${mode} ${diskStop}`);
          persist();
        }
        throw error;
      } finally {
        clearInterval(watchdog);
        await seed.close();
      }
      log(`${mode}: lowest free disk while seeding ${(lowestFree / 1e9).toFixed(1)} GB`);
      const objects = seed.dialect === 'postgres' ? await target.objects() : undefined;
      await target.resumeAfterSeed();
      const seedSeconds = Math.round((Date.now() - seedStarted) / 1000);
      const stored = seededMessages(state);
      const diskBytes = await target.diskBytes();
      bytesPerMessage = diskBytes / stored;
      log(`${mode}: ${label(stored)} messages seeded (${seedSeconds} s, ${(diskBytes / 1e9).toFixed(2)} GB on disk); measuring`);

      const release = options.lock ? await acquireLock(options.lock) : () => undefined;
      try {
        const perSubscriber = Math.floor(stored / subscribers.length);
        const deepMessagesPage = Math.max(1, Math.floor(perSubscriber / 10 / 2));
        const messagePaths = (page: number) => subscribers.map((id) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`);
        const notificationPaths = (first: number) => Array.from({ length: 10 }, (_, i) => `/v1/notifications?limit=10&page=${first + i}`);
        const result: SizeResult = {
          mode,
          logLevel: options.logLevel,
          ...(target.workerNice !== undefined ? { workerNice: target.workerNice } : {}),
          messages: stored,
          seedSeconds,
          diskBytes,
          indexSeconds: Math.round(indexSeconds),
          vacuumSeconds,
          lowestFreeDiskBytes: lowestFree,
          objects,
          load: loadavg().map((n) => Math.round(n * 100) / 100),
          messagesPerSubscriber: perSubscriber,
          ...(options.triggersOnly ? {} : {
            messagesFirst: await measureList(target, options, messagePaths(0)),
            messagesDeep: { ...(await measureList(target, options, messagePaths(deepMessagesPage))), page: deepMessagesPage },
            notificationsFirst: await measureList(target, options, notificationPaths(0)),
            notificationsDeep: { ...(await measureList(target, options, notificationPaths(options.notificationDeepPage))), page: options.notificationDeepPage },
          }),
          triggers: await measureTriggers(target, options),
          at: new Date().toISOString(),
        };
        results.push(result);
        persist();
        const cellOf = (e: EndpointResult | undefined) => (e ? `${e.p50}/${e.p99} ms (${e.requestsPerSecond}/s)` : '-');
        log(`${mode} ${label(stored)}: messages p50/p99 ${cellOf(result.messagesFirst)}, page ${deepMessagesPage} ${cellOf(result.messagesDeep)}; ` +
          `notifications ${cellOf(result.notificationsFirst)}, page ${options.notificationDeepPage} ${cellOf(result.notificationsDeep)}; ` +
          `triggers ${result.triggers.acceptedPerSecond}/s accepted, ${result.triggers.deliveriesPerSecond}/s delivered`);
      } finally {
        release();
      }
    }
    if (options.holdWhile && existsSync(options.holdWhile)) {
      log(`${mode}: holding while ${options.holdWhile} exists: ${target.url()}${target.databaseUrl ? `, ${target.databaseUrl}` : ''}`);
      while (existsSync(options.holdWhile)) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    await target.close();
    log(`${mode}: data deleted`);
  }
}

function table(results: SizeResult[]): string {
  const lines = [
    '| mode | messages | msgs/subscriber | seed s | disk GB | messages p0 p50/p99 ms (req/s) | messages deep page: p50/p99 ms (req/s) | notifications p0 p50/p99 ms (req/s) | notifications deep page: p50/p99 ms (req/s) | triggers accepted/s | deliveries/s |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const cell = (e: EndpointResult | undefined) => (e ? `${e.p50}/${e.p99} (${e.requestsPerSecond})` : '-');
  for (const r of results) {
    lines.push(`| ${r.mode} | ${label(r.messages)} | ${r.messagesPerSubscriber} | ${r.seedSeconds} | ${(r.diskBytes / 1e9).toFixed(2)} | ${cell(r.messagesFirst)} | ${r.messagesDeep?.page ?? '-'}: ${cell(r.messagesDeep)} | ${cell(r.notificationsFirst)} | ${r.notificationsDeep?.page ?? '-'}: ${cell(r.notificationsDeep)} | ${r.triggers.acceptedPerSecond} | ${r.triggers.deliveriesPerSecond} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (!options.fromSource && (await buildServer({ ifStale: true, quiet: true }))) log('server built into dist/server');
  log(`modes ${options.modes.join(',')}, sizes ${options.sizes.map(label).join(',')}, ${options.connections} connections, ${options.duration} s per load, load average ${loadavg()[0]!.toFixed(2)}`);
  const output = options.output ?? join(here, 'results', 'data-size.json');
  mkdirSync(dirname(output), { recursive: true });
  const results: SizeResult[] = [];
  const write = (persist = () => writeFileSync(output, JSON.stringify({ at: new Date().toISOString(), machine: { cpus: cpus().length, loadAverageAtEnd: loadavg()[0] }, options, results, skippedSizes }, null, 2) + '\n'));
  try {
    for (const mode of options.modes) await runMode(mode, options, results);
  } finally {
    write();
    console.log(table(results));
    for (const skipped of skippedSizes) console.log(`not measured: ${skipped}`);
    log(`written to ${output}`);
  }
}

await main();
