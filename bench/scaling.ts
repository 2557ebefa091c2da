import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Command, InvalidArgumentError } from 'commander';
import pg from 'pg';
import { startScaleoutProcesses, SCALEOUT_SECRET, type ScaleoutProcesses } from '../test/helpers/scaleout-processes.js';
import { TEST_POSTGRES_URL } from '../test/helpers/databases.js';
import { buildServer } from '../scripts/build-server.mjs';
import { positiveInteger } from './lib/cli-options.js';
import { loadConfig } from '../src/config.js';
import { api, createInAppWorkflow, inAppMessageCount, load, round1, waitForMessages, type LoadResult } from './lib/bench-client.js';
import { projectThroughput, saturationPoint, type Capacity, type OperationCosts, type Projection } from './lib/scaling-model.js';

/**
 * `npm run bench:scaling` (issue 24 point 4): throughput of Herald scaled out with 1 or 2 `herald api` and 1 or 2
 * `herald worker` processes on this machine, what each operation costs in every tier, and a projection for N machines.
 *
 * Each configuration runs as bench/http.ts runs scale-out (the compiled build; `herald migrate`, then the processes
 * over a schema of their own in PostgreSQL `test` and a private Redis), with every load from autocannon in processes
 * of their own, `--connections` split evenly over the API processes:
 *   triggers   POST /v1/events/trigger of a one-step in-app workflow, a new subscriber per request, for `--duration` s:
 *              accepted/s, then deliveries/s (in-app messages over the time until the last one exists);
 *   list       GET /v1/messages?subscriberId=…&limit=10 over subscribers holding 12 messages each, pages 0 and 1.
 * Around each, the CPU time (utime + stime from /proc/<pid>/stat, sampled every 250 ms so a process that exits keeps its
 * last reading) of the API processes, the workers, the PostgreSQL backends serving them (found in pg_stat_activity by
 * the application name the processes are given through PGAPPNAME) and redis-server, and the SQL statements, PostgreSQL
 * commits and Redis commands the Herald processes made (bench/lib/round-trip-counter.mjs).
 * The projection (bench/lib/scaling-model.ts) uses the per-operation costs of the first configuration (1 API + 1 worker,
 * what each Herald machine would run) with the ceilings measured here: PostgreSQL commits/s from a pgbench run of one-row
 * INSERT transactions (16 clients) on this
 * machine's PostgreSQL, and Redis commands/s from redis-benchmark against the private Redis.
 *
 *   npm run bench:scaling -- [--configs 1x1,1x2,2x1,2x2] [--duration 5] [--machines 1,2,4,8,16] [--cores-per-machine 2]
 */
const here = dirname(fileURLToPath(import.meta.url));
const COUNTER = join(here, 'lib', 'round-trip-counter.mjs');
const WORKFLOW = 'bench-scaling';
const TICKS_PER_SECOND = 100;
const execFileAsync = promisify(execFile);

interface Config { apis: number; workers: number }

interface Options {
  configs: Config[];
  duration: number;
  connections: number;
  listSubscribers: number;
  machines: number[];
  coresPerMachine: number;
  postgresCores: number;
  fromSource: boolean;
  output?: string;
}

function parseOptions(argv: string[]): Options {
  return new Command()
    .name('bench:scaling')
    .option('--configs <list>', 'APIxWORKERS process counts', (value) => value.split(',').map((part) => {
      const match = /^(\d+)x(\d+)$/.exec(part.trim());
      if (!match || Number(match[1]) < 1 || Number(match[2]) < 1) throw new InvalidArgumentError(`${part}: like 2x1 (2 APIs, 1 worker)`);
      return { apis: Number(match[1]), workers: Number(match[2]) };
    }), [{ apis: 1, workers: 1 }, { apis: 1, workers: 2 }, { apis: 2, workers: 1 }, { apis: 2, workers: 2 }])
    .option('--duration <seconds>', 'seconds of load per measurement', positiveInteger, 5)
    .option('--connections <n>', 'autocannon connections in all', positiveInteger, 50)
    .option('--list-subscribers <n>', 'subscribers the list rotates over (12 messages each)', positiveInteger, 200)
    .option('--machines <list>', 'Herald machine counts to project for', (value) => value.split(',').map((part) => positiveInteger(part)), [1, 2, 4, 8, 16, 32])
    .option('--cores-per-machine <n>', 'assumed cores of each Herald machine', positiveInteger, 2)
    .option('--postgres-cores <n>', 'assumed cores of the PostgreSQL machine', positiveInteger, 4)
    .option('--from-source', 'run Herald from the sources through tsx instead of the compiled build', false)
    .option('--output <file>', 'results file (default bench/results/scaling.json)')
    .parse(['node', 'bench:scaling', ...argv])
    .opts<Options>();
}

/** The workers' niceness: HERALD_WORKER_NICE when set, else Herald's default (configuration.md). */
function workerNice(): string {
  return process.env.HERALD_WORKER_NICE ?? String(loadConfig({}).worker.nice);
}

const log = (message: string) => console.log(`[bench:scaling ${new Date().toISOString().slice(11, 19)}] ${message}`);

// ---- CPU time of processes --------------------------------------------------------------------------------------

/** utime + stime of a process in clock ticks, or undefined once it is gone. */
function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

function redisServerPid(port: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (commandLine.includes('redis-server') && commandLine.includes(String(port))) return Number(entry);
    } catch { /* exited */ }
  }
  throw new Error(`no redis-server process for port ${port}`);
}

type Group = 'api' | 'worker' | 'postgres' | 'redis';

/**
 * Samples the CPU time of every process of each group every 250 ms; PostgreSQL backends are (re)discovered by
 * application name at each sample, so those opened during a phase count from 0 and those closed keep their last value.
 */
class CpuSampler {
  private readonly last = new Map<number, { group: Group; ticks: number }>();
  private readonly startTicks = new Map<number, number>();
  private timer?: NodeJS.Timeout;
  private sampling = Promise.resolve();

  constructor(private readonly fixed: Array<{ pid: number; group: Group }>, private readonly admin: pg.Client, private readonly applicationName: string) {}

  private async backends(): Promise<number[]> {
    const { rows } = await this.admin.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [this.applicationName]);
    return rows.map((row) => row.pid);
  }

  private async sample(): Promise<void> {
    const processes = [...this.fixed, ...(await this.backends()).map((pid) => ({ pid, group: 'postgres' as Group }))];
    for (const { pid, group } of processes) {
      const ticks = cpuTicks(pid);
      if (ticks === undefined) continue;
      if (!this.last.has(pid) && this.timer !== undefined && group === 'postgres') this.startTicks.set(pid, 0);
      this.last.set(pid, { group, ticks });
    }
  }

  async start(): Promise<void> {
    this.last.clear();
    this.startTicks.clear();
    await this.sample();
    for (const [pid, { ticks }] of this.last) this.startTicks.set(pid, ticks);
    this.timer = setInterval(() => { this.sampling = this.sampling.then(() => this.sample()).catch(() => undefined); }, 250);
  }

  /** CPU milliseconds per group since start. */
  async stop(): Promise<Record<Group, number>> {
    clearInterval(this.timer);
    await this.sampling;
    await this.sample();
    this.timer = undefined;
    const totals: Record<Group, number> = { api: 0, worker: 0, postgres: 0, redis: 0 };
    for (const [pid, { group, ticks }] of this.last) totals[group] += ((ticks - (this.startTicks.get(pid) ?? 0)) * 1000) / TICKS_PER_SECOND;
    return totals;
  }
}

// ---- Round trips ------------------------------------------------------------------------------------------------

interface RoundTrips { sqlStatements: number; sqlCommits: number; redisCommands: number; redisRoundTrips: number }
const NO_TRIPS: RoundTrips = { sqlStatements: 0, sqlCommits: 0, redisCommands: 0, redisRoundTrips: 0 };

async function readCounts(counterDir: string, child: ChildProcess): Promise<RoundTrips> {
  const file = join(counterDir, `${child.pid}.json`);
  rmSync(file, { force: true });
  child.kill('SIGUSR2');
  for (let i = 0; i < 100; i++) {
    try {
      return { ...NO_TRIPS, ...(JSON.parse(readFileSync(file, 'utf8')) as RoundTrips) };
    } catch { /* not written yet, or half written */ }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`process ${child.pid} wrote no round-trip counts`);
}

async function totalCounts(counterDir: string, children: ChildProcess[]): Promise<RoundTrips> {
  const all = await Promise.all(children.map((child) => readCounts(counterDir, child)));
  return all.reduce((sum, counts) => ({
    sqlStatements: sum.sqlStatements + counts.sqlStatements,
    sqlCommits: sum.sqlCommits + counts.sqlCommits,
    redisCommands: sum.redisCommands + counts.redisCommands,
    redisRoundTrips: sum.redisRoundTrips + counts.redisRoundTrips,
  }), NO_TRIPS);
}

// ---- One configuration ------------------------------------------------------------------------------------------

interface PhaseCosts {
  operations: number;
  /** CPU ms per operation by group. */
  cpuMsPerOperation: Record<Group, number>;
  /** Of all Herald processes, per operation. */
  roundTripsPerOperation: RoundTrips;
}

interface ConfigResult {
  apis: number;
  workers: number;
  at: string;
  triggers: { accepted: number; acceptedPerSecond: number; p99: number; delivered: number; deliveriesPerSecond: number; statusCounts: Record<string, number> };
  triggerCosts: PhaseCosts;
  list: { requestsPerSecond: number; p50: number; p99: number; statusCounts: Record<string, number> };
  listCosts: PhaseCosts;
  /** Busy cores over the trigger phase (load + drain), all tiers together. */
  busyCores: number;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

function costs(cpu: Record<Group, number>, before: RoundTrips, after: RoundTrips, operations: number): PhaseCosts {
  const per = (value: number) => round2(value / Math.max(1, operations));
  return {
    operations,
    cpuMsPerOperation: { api: per(cpu.api), worker: per(cpu.worker), postgres: per(cpu.postgres), redis: per(cpu.redis) },
    roundTripsPerOperation: {
      sqlStatements: per(after.sqlStatements - before.sqlStatements),
      sqlCommits: per(after.sqlCommits - before.sqlCommits),
      redisCommands: per(after.redisCommands - before.redisCommands),
      redisRoundTrips: per(after.redisRoundTrips - before.redisRoundTrips),
    },
  };
}

/** The same load on every API process at once, connections split between them; the results added up. */
async function spreadLoad(urls: string[], options: Options, request: (url: string, index: number) => Record<string, unknown>): Promise<LoadResult> {
  const connections = Math.max(1, Math.floor(options.connections / urls.length));
  const results = await Promise.all(urls.map((url, index) => load({ ...request(url, index), url, connections, durationSeconds: options.duration })));
  const statusCounts: Record<string, number> = {};
  for (const result of results) for (const [status, count] of Object.entries(result.statusCounts)) statusCounts[status] = (statusCounts[status] ?? 0) + count;
  return {
    ok: results.reduce((sum, r) => sum + r.ok, 0),
    notOk: results.reduce((sum, r) => sum + r.notOk, 0),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    statusCounts,
    elapsedMs: Math.max(...results.map((r) => r.elapsedMs)),
    requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
    // Percentiles do not add up: the worst process's.
    latencyMs: { p50: Math.max(...results.map((r) => r.latencyMs.p50)), p99: Math.max(...results.map((r) => r.latencyMs.p99)), max: Math.max(...results.map((r) => r.latencyMs.max)) },
  };
}

async function runConfig(config: Config, options: Options, admin: pg.Client): Promise<{ result: ConfigResult; redisPort: number; schemaUrl: string; processes: ScaleoutProcesses; counterDir: string }> {
  const counterDir = mkdtempSync(join(tmpdir(), 'herald-bench-scaling-counts-'));
  const applicationName = `herald-bench-scaling-${process.pid}-${config.apis}x${config.workers}`;
  const processes = await startScaleoutProcesses({
    apis: config.apis,
    workers: config.workers,
    env: {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${COUNTER}`.trim(),
      BENCH_ROUND_TRIPS_DIR: counterDir,
      HERALD_FROM_SOURCE: options.fromSource ? '1' : '',
      HERALD_QUEUE_POLL_MS: '200',
      PGAPPNAME: applicationName,
      LOG_LEVEL: 'warn',
      // The workers at Herald's own default niceness, as bench:http and an operator's `herald worker` run them (the
      // test helper's 0 is for the suite's shared machine); HERALD_WORKER_NICE=0 measures them unniced.
      HERALD_WORKER_NICE: workerNice(),
    },
  });
  const redisPort = Number(new URL(processes.env.REDIS_URL!).port);
  const urls = processes.apis.map((process) => process.url);
  const key = SCALEOUT_SECRET;
  const heraldChildren = [...processes.apis.map((a) => a.child), ...processes.workers.map((w) => w.child)];
  const sampler = new CpuSampler([
    ...processes.apis.map((a) => ({ pid: a.child.pid!, group: 'api' as Group })),
    ...processes.workers.map((w) => ({ pid: w.child.pid!, group: 'worker' as Group })),
    { pid: redisServerPid(redisPort), group: 'redis' },
  ], admin, applicationName);

  await createInAppWorkflow(urls[0]!, key, WORKFLOW);
  // Warm every process (connections, caches, compiled code) with a short unmeasured trigger load.
  await Promise.all(urls.map((url, index) => load({ kind: 'trigger', url, connections: 5, durationSeconds: 1, headers: { authorization: `ApiKey ${key}` }, workflowId: WORKFLOW, subscriberPrefix: `warm-${index}` })));
  await waitForMessages(urls[0]!, key, 1, 60_000);

  // 1. Triggers and their deliveries.
  const messagesBefore = await inAppMessageCount(urls[0]!, key);
  const countsBefore = await totalCounts(counterDir, heraldChildren);
  await sampler.start();
  const started = Date.now();
  const triggers = await spreadLoad(urls, options, (_url, index) => ({
    kind: 'trigger', headers: { authorization: `ApiKey ${key}` }, workflowId: WORKFLOW, subscriberPrefix: `scale-${Date.now().toString(36)}-${index}`,
  }));
  const accepted = triggers.statusCounts['201'] ?? 0;
  const delivered = await waitForMessages(urls[0]!, key, messagesBefore + accepted, 600_000);
  const triggerCpu = await sampler.stop();
  const phaseMs = Date.now() - started;
  const countsAfter = await totalCounts(counterDir, heraldChildren);
  const deliveredCount = delivered.count - messagesBefore;
  const triggerCosts = costs(triggerCpu, countsBefore, countsAfter, deliveredCount);
  const busyCores = round2((triggerCpu.api + triggerCpu.worker + triggerCpu.postgres + triggerCpu.redis) / phaseMs);
  log(`${config.apis}x${config.workers}: ${accepted} triggers accepted (${Math.round(triggers.requestsPerSecond)}/s), ${deliveredCount} delivered (${Math.round((deliveredCount * 1000) / (delivered.at - started))}/s); CPU ms per trigger: ${JSON.stringify(triggerCosts.cpuMsPerOperation)}`);

  // 2. List pages.
  const listPrefix = `list-${Date.now().toString(36)}`;
  const subscribers = Array.from({ length: options.listSubscribers }, (_, i) => `${listPrefix}-${i}`);
  const seedStart = await inAppMessageCount(urls[0]!, key);
  for (let round = 0; round < 12; round++) {
    for (let i = 0; i < subscribers.length; i += 100) {
      await api(urls[0]!, key, 'POST', '/v1/events/trigger', { name: WORKFLOW, to: subscribers.slice(i, i + 100), payload: { n: round, text: 'list' } });
    }
  }
  await waitForMessages(urls[0]!, key, seedStart + 12 * subscribers.length, 300_000);
  const paths = subscribers.flatMap((id) => [0, 1].map((page) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`));
  const listBefore = await totalCounts(counterDir, heraldChildren);
  await sampler.start();
  const list = await spreadLoad(urls, options, () => ({ kind: 'rotate', paths, headers: { authorization: `ApiKey ${key}` } }));
  const listCpu = await sampler.stop();
  const listAfter = await totalCounts(counterDir, heraldChildren);
  const listCosts = costs(listCpu, listBefore, listAfter, list.ok + list.notOk);
  log(`${config.apis}x${config.workers}: list ${Math.round(list.requestsPerSecond)} req/s, p99 ${round1(list.latencyMs.p99)} ms; CPU ms per request: ${JSON.stringify(listCosts.cpuMsPerOperation)}`);

  return {
    result: {
      apis: config.apis,
      workers: config.workers,
      at: new Date().toISOString(),
      triggers: {
        accepted,
        acceptedPerSecond: Math.round(triggers.requestsPerSecond),
        p99: round1(triggers.latencyMs.p99),
        delivered: deliveredCount,
        deliveriesPerSecond: Math.round((deliveredCount * 1000) / (delivered.at - started)),
        statusCounts: triggers.statusCounts,
      },
      triggerCosts,
      list: { requestsPerSecond: Math.round(list.requestsPerSecond), p50: round1(list.latencyMs.p50), p99: round1(list.latencyMs.p99), statusCounts: list.statusCounts },
      listCosts,
      busyCores,
    },
    redisPort,
    schemaUrl: processes.env.DATABASE_URL!,
    processes,
    counterDir,
  };
}

// ---- Ceilings of the shared tiers -------------------------------------------------------------------------------

/** Commits/s of one-row INSERT transactions from 16 pgbench clients, on this machine's PostgreSQL (fsync as configured). */
async function postgresCommitCeiling(admin: pg.Client, seconds: number): Promise<{ commitsPerSecond: number; settings: Record<string, string> }> {
  const table = `bench_commit_probe_${process.pid}`;
  const settings: Record<string, string> = {};
  for (const name of ['fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay']) settings[name] = (await admin.query(`show ${name}`)).rows[0][name];
  await admin.query(`create table ${table} (id bigserial primary key, v text not null)`);
  const dir = mkdtempSync(join(tmpdir(), 'herald-bench-pgbench-'));
  try {
    const script = join(dir, 'insert.sql');
    writeFileSync(script, `insert into ${table} (v) values ('herald bench commit probe');\n`);
    const url = new URL(TEST_POSTGRES_URL);
    const { stdout } = await execFileAsync('pgbench', ['-n', '-h', url.hostname, '-p', url.port || '5432', '-U', url.username, '-c', '16', '-j', '2', '-T', String(seconds), '-f', script, url.pathname.slice(1)]);
    const tps = /tps = ([\d.]+)/.exec(stdout);
    if (!tps) throw new Error(`pgbench printed no tps:\n${stdout}`);
    return { commitsPerSecond: Math.round(Number(tps[1])), settings };
  } finally {
    await admin.query(`drop table if exists ${table}`);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Commands/s of redis-benchmark (50 clients, no pipelining) against the private Redis: SET, and EVALSHA-like INCR. */
async function redisCommandCeiling(port: number): Promise<{ set: number; incr: number; lpush: number }> {
  const { stdout } = await execFileAsync('redis-benchmark', ['-p', String(port), '-q', '-n', '100000', '-c', '50', '-t', 'set,incr,lpush']);
  const rate = (name: string) => Math.round(Number(new RegExp(`${name}: ([\\d.]+) requests per second`, 'i').exec(stdout)?.[1] ?? NaN));
  return { set: rate('SET'), incr: rate('INCR'), lpush: rate('LPUSH') };
}

// ---- Main -------------------------------------------------------------------------------------------------------

function operationCosts(phase: PhaseCosts): OperationCosts {
  return {
    apiCpuMs: phase.cpuMsPerOperation.api,
    workerCpuMs: phase.cpuMsPerOperation.worker,
    postgresCpuMs: phase.cpuMsPerOperation.postgres,
    postgresCommits: phase.roundTripsPerOperation.sqlCommits,
    redisCpuMs: phase.cpuMsPerOperation.redis,
    redisCommands: phase.roundTripsPerOperation.redisCommands,
  };
}

function projectionTable(title: string, projections: Projection[]): string {
  const fmt = (value: number) => (Number.isFinite(value) ? String(Math.round(value)) : '∞');
  return [
    `${title}`,
    '| Herald machines | projected ops/s | limited by | Herald tier | PG CPU | PG commits | Redis CPU | Redis commands |',
    '|---|---|---|---|---|---|---|---|',
    ...projections.map((p) => `| ${p.machines} | ${fmt(p.perSecond)} | ${p.limitedBy} | ${fmt(p.tiers.herald)} | ${fmt(p.tiers.postgresCpu)} | ${fmt(p.tiers.postgresCommits)} | ${fmt(p.tiers.redisCpu)} | ${fmt(p.tiers.redisCommands)} |`),
  ].join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  if (!options.fromSource && (await buildServer({ ifStale: true, quiet: true }))) log('server built into dist/server');
  log(`configs ${options.configs.map((c) => `${c.apis}x${c.workers}`).join(',')}, ${options.connections} connections, ${options.duration} s per load, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)}`);
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL, application_name: 'herald-bench-scaling-admin' });
  await admin.connect();
  const results: ConfigResult[] = [];
  let ceilings: { postgres: Awaited<ReturnType<typeof postgresCommitCeiling>>; redis: Awaited<ReturnType<typeof redisCommandCeiling>> } | undefined;
  try {
    for (const [index, config] of options.configs.entries()) {
      const run = await runConfig(config, options, admin);
      try {
        results.push(run.result);
        // The ceilings once, on the last configuration's private Redis.
        if (index === options.configs.length - 1) {
          ceilings = { postgres: await postgresCommitCeiling(admin, options.duration), redis: await redisCommandCeiling(run.redisPort) };
          log(`ceilings: PostgreSQL ${ceilings.postgres.commitsPerSecond} commits/s (pgbench, 16 clients, ${JSON.stringify(ceilings.postgres.settings)}); Redis ${JSON.stringify(ceilings.redis)} commands/s (redis-benchmark, 50 clients)`);
        }
      } finally {
        await run.processes.close();
        rmSync(run.counterDir, { recursive: true, force: true });
      }
    }
  } finally {
    await admin.end();
  }

  const lines: string[] = [];
  lines.push('| APIs × workers | triggers accepted/s | deliveries/s | list req/s (p99 ms) | busy cores | CPU ms/trigger+delivery: API / worker / PG / Redis | SQL stmts / PG commits / Redis cmds per trigger+delivery | CPU ms/list request: API / PG / Redis |');
  lines.push('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const c = r.triggerCosts.cpuMsPerOperation;
    const t = r.triggerCosts.roundTripsPerOperation;
    const l = r.listCosts.cpuMsPerOperation;
    lines.push(`| ${r.apis} × ${r.workers} | ${r.triggers.acceptedPerSecond} | ${r.triggers.deliveriesPerSecond} | ${r.list.requestsPerSecond} (${r.list.p99}) | ${r.busyCores} | ${c.api} / ${c.worker} / ${c.postgres} / ${c.redis} | ${t.sqlStatements} / ${t.sqlCommits} / ${t.redisCommands} | ${l.api} / ${l.postgres} / ${l.redis} |`);
  }
  // Each Herald machine runs one API and one worker: the first configuration's costs (1 × 1 by default) are one
  // machine's, measured with the fewest processes competing for this machine's cores.
  const basis = results[0]!;
  const capacity: Capacity | undefined = ceilings && {
    coresPerMachine: options.coresPerMachine,
    postgresCores: options.postgresCores,
    postgresCommitsPerSecond: ceilings.postgres.commitsPerSecond,
    // BullMQ's work is Lua scripts, dearer than SET; the SET rate is an upper bound, the Redis CPU tier the real one.
    redisCommandsPerSecond: ceilings.redis.set,
  };
  const projections = capacity ? {
    triggers: options.machines.map((machines) => projectThroughput(operationCosts(basis.triggerCosts), capacity, machines)),
    list: options.machines.map((machines) => projectThroughput(operationCosts(basis.listCosts), capacity, machines)),
    triggerSaturation: saturationPoint(operationCosts(basis.triggerCosts), capacity),
    listSaturation: saturationPoint(operationCosts(basis.listCosts), capacity),
  } : undefined;
  if (projections && capacity) {
    lines.push('');
    lines.push(`Projection from the ${basis.apis} × ${basis.workers} costs; assumed ${capacity.coresPerMachine} cores per Herald machine, ${capacity.postgresCores} PostgreSQL cores, ${capacity.postgresCommitsPerSecond} PostgreSQL commits/s, ${capacity.redisCommandsPerSecond} Redis commands/s, Redis on one core:`);
    lines.push(projectionTable('Triggers with their in-app delivery:', projections.triggers));
    lines.push(`A shared tier limits triggers from ${projections.triggerSaturation?.machines ?? '–'} machines on (${projections.triggerSaturation?.limitedBy ?? 'never'}).`);
    lines.push(projectionTable('GET /v1/messages pages:', projections.list));
    lines.push(`A shared tier limits list pages from ${projections.listSaturation?.machines ?? '–'} machines on (${projections.listSaturation?.limitedBy ?? 'never'}).`);
  }
  console.log(lines.join('\n'));
  const output = options.output ?? join(here, 'results', 'scaling.json');
  mkdirSync(dirname(output), { recursive: true });
  writeFileSync(output, JSON.stringify({ at: new Date().toISOString(), machine: { cpus: cpus().length, loadAverageAtEnd: loadavg()[0] }, options, workerNice: Number(workerNice()), results, ceilings, capacity, projections }, null, 2) + '\n');
  log(`written to ${output}`);
}

await main();
