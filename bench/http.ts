import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { startHerald, freePort, type HeraldProcess } from '../test/helpers/herald-process.js';
import { startScaleoutProcesses, SCALEOUT_SECRET, type ScaleoutProcesses } from '../test/helpers/scaleout-processes.js';
import { buildServer } from '../scripts/build-server.mjs';
import { loadConfig } from '../src/config.js';
import { benchMode, positiveInteger, type BenchMode } from './lib/cli-options.js';
import { api, BENCH_SECRET, createInAppWorkflow, inAppMessageCount, load, round1, seedListMessages, waitForMessages } from './lib/bench-client.js';
import { cpuMsOf, cpuPerOperation, findGroups, niceOf, readCpu } from './lib/process-cpu.js';

/**
 * `npm run bench:http -- --mode embedded|scaleout` (issue 24): the independent measurement, reproduced.
 *
 * Herald runs as `npm start` runs it (the compiled build, built first when stale) in processes of its own: `herald
 * start` embedded; `herald migrate`, `herald api` and `herald worker` over PostgreSQL (a schema of its own in `test`)
 * and a private Redis scaled out. Every load comes from autocannon (50 connections) in a separate process:
 * 1. triggers: `POST /v1/events/trigger` of a one-step in-app workflow, a new subscriber per request; accepted/s =
 *    201s over the load, then deliveries/s = in-app messages over the time until the last one exists;
 * 2. `GET /v1/messages?subscriberId=…&limit=10` over `--list-subscribers` subscribers with 12 messages each, pages 0
 *    and 1 in turn, and `GET /v1/notifications?limit=10&page=…` over the pages of the events, so consecutive requests
 *    never ask for the same page;
 * 3. a bare Fastify process answering, on each URL, the bytes Herald answered there (read after Herald's load of that
 *    list), under the same load, in the same run.
 * Round trips per operation (SQL statements, Redis commands) are counted inside the Herald processes by a preloaded
 * module wrapping the drivers (bench/lib/round-trip-counter.mjs), read between phases. Since session 17 the list loads
 * are timed without its better-sqlite3 wrappers (`npm start` has none) and their statements counted in a 2-second load
 * of their own right after each (`--list-counts apart`, the default; `timed` counts them during the timed load, as
 * before). The trigger load is timed and counted as before, with the wrappers.
 * Per phase it also reports, for the scaled-out API: CPU per list request of the API, the worker, their PostgreSQL
 * backends and Redis; the API's write system calls per request (/proc/<pid>/io); pg-pool checkouts that had to wait
 * for a connection; the event loop's delay (p99, max). `--profile <dir>` writes a CPU profile of each Herald process per
 * phase (<pid>-<n>.cpuprofile; the API's n = 1 is the trigger load, 4 the messages load, 6 the events load with
 * `--list-counts timed`; 4 and 7 with `apart`, which reads the counts once more after each list).
 * `--triggers-only` runs phase 1 alone (its figures as in a full run; `lists` is empty): an A/B pair of the trigger
 * path in well under a minute a run.
 * Logs: `--log-level info` by default, as `npm start` runs (a JSON line per request into a pipe); runs before
 * 2026-11-26 (session 13) used `warn`, which writes none: pass `--log-level warn` to compare with them.
 */
const here = dirname(fileURLToPath(import.meta.url));
const WORKFLOW = 'bench-http';
const COUNTER = join(here, 'lib', 'round-trip-counter.mjs');
const BARE = join(here, 'lib', 'bare-server.mjs');

interface Options {
  mode: BenchMode;
  duration: number;
  connections: number;
  listSubscribers: number;
  fromSource: boolean;
  logLevel: string;
  output?: string;
  profile?: string;
  listCounts: 'apart' | 'timed';
  triggersOnly: boolean;
}

/** Seconds of the load in which a list's statements are counted (`--list-counts apart`). */
const COUNTING_SECONDS = 2;

function listCounts(value: string): 'apart' | 'timed' {
  if (value !== 'apart' && value !== 'timed') throw new InvalidArgumentError('must be apart or timed');
  return value;
}

interface RoundTrips {
  sqlStatements: number; redisCommands: number; redisRoundTrips: number;
  /** pg.Pool checkouts, those that waited for a connection, and the ms they waited (bench/lib/round-trip-counter.mjs). */
  poolCheckouts?: number; poolWaits?: number; poolWaitMs?: number;
  /** Event-loop delay since the previous read of the counts. */
  loopDelayP99Ms?: number; loopDelayMaxMs?: number;
}

function parseOptions(argv: string[]): Options {
  return new Command()
    .name('bench:http')
    .option('--mode <mode>', 'embedded (SQLite) or scaleout (PostgreSQL + Redis)', benchMode, 'embedded')
    .option('--duration <seconds>', 'seconds of load per measurement', positiveInteger, 10)
    .option('--connections <n>', 'autocannon connections', positiveInteger, 50)
    .option('--list-subscribers <n>', 'subscribers the messages list rotates over (12 messages each)', positiveInteger, 300)
    .option('--log-level <level>', "Herald's LOG_LEVEL: info, npm start's default, writes one line per request (to a pipe this bench reads); warn writes none", 'info')
    .option('--from-source', 'run Herald from the sources through tsx instead of the compiled build', false)
    .option('--profile <dir>', 'write a CPU profile of each Herald process per phase into <dir> (<pid>-<n>.cpuprofile, n counting reads of the round trips)')
    .option('--list-counts <where>', "apart: time the list loads without the counter's better-sqlite3 wrappers and count their statements in a load of their own after each; timed: count them during the timed load (before 2026-11-26, session 17)", listCounts, 'apart')
    .option('--triggers-only', 'the trigger load and its deliveries only, no list loads (A/B of the trigger path in a third of the time)', false)
    .option('--output <file>', 'results file (default bench/results/http-<mode>.json)')
    .parse(['node', 'bench:http', ...argv])
    .opts<Options>();
}

const log = (message: string) => console.log(`[bench:http ${new Date().toISOString().slice(11, 19)}] ${message}`);

/** The Herald processes under test, with their round-trip counters. */
interface Target {
  url: string;
  /** The process that answers HTTP, and (scale-out) the one that runs jobs. */
  api: ChildProcess;
  worker?: ChildProcess;
  /** Scale-out: the Redis server's port (its CPU is measured with the processes'). */
  redisPort?: number;
  counterDir: string;
  close(): Promise<void>;
}

async function startTarget(options: Options): Promise<Target> {
  const counterDir = mkdtempSync(join(tmpdir(), 'herald-bench-http-counts-'));
  // The Herald processes write their profiles into it and do not create it (a missing directory lost the profile).
  if (options.profile) mkdirSync(options.profile, { recursive: true });
  const env = {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${COUNTER}`.trim(),
    BENCH_ROUND_TRIPS_DIR: counterDir,
    HERALD_FROM_SOURCE: options.fromSource ? '1' : '',
    LOG_LEVEL: options.logLevel,
    ...(options.profile ? { BENCH_PROFILE_DIR: options.profile } : {}),
  };
  if (options.mode === 'embedded') {
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-http-'));
    const herald: HeraldProcess = await startHerald({ ...env, HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: BENCH_SECRET });
    return {
      url: herald.url,
      api: herald.child,
      counterDir,
      async close() {
        await herald.stop();
        rmSync(dataDir, { recursive: true, force: true });
        rmSync(counterDir, { recursive: true, force: true });
      },
    };
  }
  // The worker at its default priority (the test helper runs it at 0), unless this bench's caller set one.
  const nice = process.env.HERALD_WORKER_NICE ?? String(loadConfig({}).worker.nice);
  const processes: ScaleoutProcesses = await startScaleoutProcesses({ apis: 1, workers: 1, env: { ...env, HERALD_QUEUE_POLL_MS: '200', HERALD_WORKER_NICE: nice } });
  return {
    url: processes.apis[0]!.url,
    api: processes.apis[0]!.child,
    worker: processes.workers[0]!.child,
    redisPort: Number(new URL(processes.env.REDIS_URL!).port),
    counterDir,
    async close() {
      await processes.close();
      rmSync(counterDir, { recursive: true, force: true });
    },
  };
}

async function readCounts(target: Target, child: ChildProcess): Promise<RoundTrips> {
  const file = join(target.counterDir, `${child.pid}.json`);
  rmSync(file, { force: true });
  child.kill('SIGUSR2');
  for (let i = 0; i < 100; i++) {
    if (readdirSync(target.counterDir).includes(`${child.pid}.json`)) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as RoundTrips;
      } catch { /* half written */ }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`process ${child.pid} wrote no round-trip counts`);
}

function perOperation(before: RoundTrips, after: RoundTrips, operations: number) {
  const per = (key: 'sqlStatements' | 'redisCommands' | 'redisRoundTrips') => Math.round(((after[key] - before[key]) / Math.max(1, operations)) * 100) / 100;
  return { sqlStatements: per('sqlStatements'), redisCommands: per('redisCommands'), redisRoundTrips: per('redisRoundTrips') };
}

/** write(2)-like system calls of a process so far (/proc/<pid>/io `syscw`): sockets, pipes and files alike. */
function writeSyscalls(pid: number): number {
  try {
    return Number(/^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

/** Whether requests waited for a PostgreSQL connection, and the event loop's delay, between two reads of the counts. */
function apiHealth(before: RoundTrips, after: RoundTrips) {
  const checkouts = (after.poolCheckouts ?? 0) - (before.poolCheckouts ?? 0);
  const waits = (after.poolWaits ?? 0) - (before.poolWaits ?? 0);
  return {
    poolCheckouts: checkouts,
    poolWaits: waits,
    poolWaitMsMean: waits ? Math.round((((after.poolWaitMs ?? 0) - (before.poolWaitMs ?? 0)) / waits) * 100) / 100 : 0,
    loopDelayP99Ms: round1(after.loopDelayP99Ms ?? 0),
    loopDelayMaxMs: round1(after.loopDelayMaxMs ?? 0),
  };
}

async function startBare(bodies: Map<string, Buffer>): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  // Thousands of pages: through a file, not the command line (one argument is limited to 128 KB).
  const bodiesFile = join(mkdtempSync(join(tmpdir(), 'herald-bare-')), 'bodies.json');
  writeFileSync(bodiesFile, JSON.stringify(Object.fromEntries([...bodies].map(([url, body]) => [url, body.toString('base64')]))));
  const child = spawn(process.execPath, [BARE, JSON.stringify({ port, bodiesFile })], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('listening')) resolve(); });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => { child.kill('SIGKILL'); rmSync(dirname(bodiesFile), { recursive: true, force: true }); } };
}

/**
 * What Herald answered on each of `paths`, read after its timed load (so no page is read before that load), 8 at a
 * time: the bare server answers each URL with these bytes.
 */
async function answeredBodies(url: string, key: string, paths: readonly string[]): Promise<Map<string, Buffer>> {
  const bodies = new Map<string, Buffer>();
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < paths.length) {
      const path = paths[next++]!;
      bodies.set(path, (await api(url, key, 'GET', path)).raw);
    }
  }));
  return bodies;
}

function mergeGroups(a: Record<string, number[]>, b: Record<string, number[]>): Record<string, number[]> {
  return Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((name) => [name, [...new Set([...(a[name] ?? []), ...(b[name] ?? [])])]]));
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (!options.fromSource && (await buildServer({ ifStale: true, quiet: true }))) log('server built into dist/server');
  log(`mode ${options.mode}, LOG_LEVEL ${options.logLevel}, ${options.connections} connections, ${options.duration} s per load, load average ${loadavg()[0]!.toFixed(2)}`);
  const target = await startTarget(options);
  if (target.worker) log(`worker process niceness ${niceOf(target.worker.pid!)} (HERALD_WORKER_NICE)`);
  const key = options.mode === 'embedded' ? BENCH_SECRET : SCALEOUT_SECRET;
  try {
    await createInAppWorkflow(target.url, key, WORKFLOW, { name: 'bench http' });

    // 1. Triggers, a new subscriber per request, and their deliveries.
    const processes = [target.api, ...(target.worker ? [target.worker] : [])];
    const countsBefore = await Promise.all(processes.map((child) => readCounts(target, child)));
    const messagesBefore = await inAppMessageCount(target.url, key);
    // CPU over the triggers and their deliveries: embedded, the one process (API and worker); scaled out, the API, the
    // worker, their PostgreSQL backends and Redis. CPU per operation decides an A/B where rates move with the machine.
    const cpuProcesses = { api: target.api.pid!, ...(target.worker ? { worker: target.worker.pid! } : {}) };
    const cpuGroups = () => findGroups(cpuProcesses, 5432, target.redisPort ?? -1);
    const groupsAtStart = cpuGroups();
    const cpuAtStart = readCpu(groupsAtStart);
    const loadStart = Date.now();
    const writesAtStart = writeSyscalls(target.api.pid!);
    const triggers = await load({ kind: 'trigger', url: target.url, connections: options.connections, durationSeconds: options.duration, headers: { authorization: `ApiKey ${key}` }, workflowId: WORKFLOW, subscriberPrefix: `bench-${Date.now().toString(36)}` });
    const cpuAfterLoad = readCpu(mergeGroups(groupsAtStart, cpuGroups()));
    const apiAfterLoad = await readCounts(target, target.api);
    log(`triggers: API ${JSON.stringify(apiHealth(countsBefore[0]!, apiAfterLoad))}`);
    const accepted = triggers.statusCounts['201'] ?? 0;
    const apiWritesPerTrigger = Math.round(((writeSyscalls(target.api.pid!) - writesAtStart) / Math.max(1, accepted)) * 100) / 100;
    log(`triggers: API write system calls per accepted trigger ${apiWritesPerTrigger}`);
    log(`triggers: ${accepted} accepted in ${triggers.elapsedMs} ms (${Math.round(triggers.requestsPerSecond)}/s), other statuses ${JSON.stringify(triggers.statusCounts)}`);
    const delivered = await waitForMessages(target.url, key, messagesBefore + accepted, 300_000);
    const deliveredCount = delivered.count - messagesBefore;
    const deliveriesPerSecond = (deliveredCount * 1000) / (delivered.at - loadStart);
    const countsAfter = await Promise.all(processes.map((child) => readCounts(target, child)));
    log(`deliveries: ${deliveredCount} in ${delivered.at - loadStart} ms (${Math.round(deliveriesPerSecond)}/s)`);
    const cpuPerTrigger = {
      duringTriggerLoad: cpuPerOperation(cpuAtStart, cpuAfterLoad, accepted),
      triggerAndDelivery: cpuPerOperation(cpuAtStart, readCpu(mergeGroups(groupsAtStart, cpuGroups())), deliveredCount),
    };
    log(`CPU ms per trigger and its delivery: ${Object.entries(cpuPerTrigger.triggerAndDelivery).map(([name, cpu]) => `${name} ${cpu.msPerOperation}`).join(', ')}`);
    const roundTrips: Record<string, unknown> = options.mode === 'embedded'
      ? { triggerWithDelivery: perOperation(countsBefore[0]!, countsAfter[0]!, deliveredCount) }
      : { trigger: perOperation(countsBefore[0]!, apiAfterLoad, deliveredCount), delivery: perOperation(countsBefore[1]!, countsAfter[1]!, deliveredCount) };

    // 2. Lists: subscribers with 12 messages each (pages 0 and 1 of 10), the events' pages.
    const lists: Record<string, unknown> = {};
    if (!options.triggersOnly) {
      const listPrefix = `list-${Date.now().toString(36)}`;
      const listSubscribers = Array.from({ length: options.listSubscribers }, (_, i) => `${listPrefix}-${i}`);
      const seeded = await seedListMessages(target.url, key, WORKFLOW, listSubscribers);
      log(`lists: seeded ${seeded} messages over ${listSubscribers.length} subscribers`);
      const messagePaths = listSubscribers.flatMap((id) => [0, 1].map((page) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`));
      const eventPages = Math.max(1, Math.min(2000, Math.floor(accepted / 10)));
      const notificationPaths = Array.from({ length: eventPages }, (_, page) => `/v1/notifications?limit=10&page=${page}`);
      for (const [name, paths] of [['messages', messagePaths], ['notifications', notificationPaths]] as const) {
        // `--list-counts apart`: the timed load runs without the counter's better-sqlite3 wrappers (taken out when the
        // counts are read with the file there, put back at the next read), and the statements are counted in a load of
        // their own right after it (same paths and connections, COUNTING_SECONDS).
        const apart = options.listCounts === 'apart';
        const sqliteOff = join(target.counterDir, 'sqlite-off');
        if (apart) writeFileSync(sqliteOff, '');
        const before = await readCounts(target, target.api);
        const listGroups = target.worker ? cpuGroups() : undefined;
        const cpuBefore = listGroups && readCpu(listGroups);
        const writesBefore = writeSyscalls(target.api.pid!);
        // The API process's CPU (every thread of it: reader threads included) per request of the timed load.
        const apiCpuBefore = cpuMsOf(target.api.pid!);
        const herald = await load({ kind: 'rotate', url: target.url, paths, connections: options.connections, durationSeconds: options.duration, headers: { authorization: `ApiKey ${key}` } });
        const apiCpuAfter = cpuMsOf(target.api.pid!);
        const cpuAfter = listGroups && readCpu(mergeGroups(listGroups, cpuGroups()));
        if (apart) rmSync(sqliteOff, { force: true });
        const after = await readCounts(target, target.api);
        const requests = herald.ok + herald.notOk;
        let roundTripsPerRequest = perOperation(before, after, requests);
        let countedApart: Record<string, unknown> | undefined;
        if (apart) {
          const counting = await load({ kind: 'rotate', url: target.url, paths, connections: options.connections, durationSeconds: COUNTING_SECONDS, headers: { authorization: `ApiKey ${key}` } });
          const counted = counting.ok + counting.notOk;
          const countedAfter = await readCounts(target, target.api);
          // Embedded, the timed load's own SQL statements are 0 (nothing counted them); scaled out, PostgreSQL's are
          // counted in both loads (pg's wrapper stays: a round trip over a socket).
          countedApart = { seconds: COUNTING_SECONDS, requests: counted, timedLoadPerRequest: roundTripsPerRequest };
          roundTripsPerRequest = perOperation(after, countedAfter, counted);
          log(`GET /v1/${name}: round trips counted over ${counted} requests after the timed load: ${JSON.stringify(roundTripsPerRequest)}`);
        }
        const apiCpuMsPerRequest = apiCpuBefore !== undefined && apiCpuAfter !== undefined ? Math.round(((apiCpuAfter - apiCpuBefore) / Math.max(1, requests)) * 1000) / 1000 : undefined;
        const apiWritesPerRequest = Math.round(((writeSyscalls(target.api.pid!) - writesBefore) / Math.max(1, requests)) * 100) / 100;
        // The baseline: a bare Fastify answering each URL with the bytes Herald answered there (pages differ in size:
        // a subscriber's page 1 holds 2 of its 12 messages). Until session 23 it answered every URL with page 0's
        // bytes, more than Herald's mean page (BENCHMARKS.md, session 23).
        const bodies = await answeredBodies(target.url, key, paths);
        const bare = await startBare(bodies);
        const bareResult = await load({ kind: 'rotate', url: bare.url, paths, connections: options.connections, durationSeconds: options.duration }).finally(() => bare.stop());
        const bodyBytes = [...bodies.values()].map((body) => body.length);
        lists[name] = {
          bytes: Math.round(bodyBytes.reduce((sum, bytes) => sum + bytes, 0) / bodyBytes.length),
          bytesRange: [Math.min(...bodyBytes), Math.max(...bodyBytes)],
          bareStatusCounts: bareResult.statusCounts,
          heraldRps: Math.round(herald.requestsPerSecond),
          bareRps: Math.round(bareResult.requestsPerSecond),
          ratioToBare: Math.round((herald.requestsPerSecond / bareResult.requestsPerSecond) * 1000) / 1000,
          latencyMs: { p50: round1(herald.latencyMs.p50), p99: round1(herald.latencyMs.p99) },
          bareLatencyMs: { p50: round1(bareResult.latencyMs.p50), p99: round1(bareResult.latencyMs.p99) },
          statusCounts: herald.statusCounts,
          roundTripsPerRequest,
          ...(countedApart ? { roundTripsCountedApart: countedApart } : {}),
          api: { ...apiHealth(before, after), writeSyscallsPerRequest: apiWritesPerRequest, apiCpuMsPerRequest },
          ...(cpuBefore && cpuAfter ? { cpuPerRequest: cpuPerOperation(cpuBefore, cpuAfter, requests) } : {}),
        };
        const cpu = cpuBefore && cpuAfter ? cpuPerOperation(cpuBefore, cpuAfter, requests) : undefined;
        log(`GET /v1/${name}: API write system calls per request ${apiWritesPerRequest}, API process CPU ms per request ${apiCpuMsPerRequest}`);
        if (cpu) log(`GET /v1/${name}: CPU ms per request ${Object.entries(cpu).map(([group, c]) => `${group} ${c.msPerOperation}`).join(', ')}; ${JSON.stringify(apiHealth(before, after))}`);
        log(`GET /v1/${name}: ${Math.round(herald.requestsPerSecond)} req/s, bare ${Math.round(bareResult.requestsPerSecond)} req/s (${(herald.requestsPerSecond / bareResult.requestsPerSecond * 100).toFixed(1)} %), p50/p99 ${round1(herald.latencyMs.p50)}/${round1(herald.latencyMs.p99)} ms`);
      }
    }

    const result = {
      mode: options.mode,
      logLevel: options.logLevel,
      ...(target.worker ? { workerNice: niceOf(target.worker.pid!), workerYieldConcurrency: loadConfig({ HERALD_WORKER_YIELD_CONCURRENCY: process.env.HERALD_WORKER_YIELD_CONCURRENCY }).worker.yieldConcurrency } : {}),
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, loadAverageAtEnd: loadavg()[0] },
      connections: options.connections,
      durationSeconds: options.duration,
      triggers: { accepted, acceptedPerSecond: Math.round(triggers.requestsPerSecond), latencyMs: triggers.latencyMs, statusCounts: triggers.statusCounts, apiWriteSyscallsPerTrigger: apiWritesPerTrigger },
      deliveries: { delivered: deliveredCount, perSecond: Math.round(deliveriesPerSecond) },
      lists,
      roundTrips,
      cpuPerTrigger,
    };
    console.log(JSON.stringify(result, null, 2));
    const output = options.output ?? join(here, 'results', `http-${options.mode}.json`);
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, JSON.stringify(result, null, 2) + '\n');
    log(`written to ${output}`);
  } finally {
    await target.close();
  }
}

await main();
