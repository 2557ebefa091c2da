import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Command } from 'commander';
import { buildServer } from '../scripts/build-server.mjs';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/main.js';
import { SqlQueue } from '../src/queue/sql-queue.js';
import { PromMetrics } from '../src/observability/metrics.js';
import { runHttpLoad } from './lib/http-load.js';
import { median } from './lib/rounds.js';
import { positiveInteger } from './lib/cli-options.js';

/**
 * `npm run bench:metrics`: what metrics cost. The same `herald start` process (embedded, compiled build), once with
 * HERALD_METRICS=on and once with off, alternating in each round, measured in ONE run:
 *   - triggers: POST /v1/events/trigger (in-app workflow) under load: accepted per second and the server's CPU per
 *     trigger (its own utime+stime from /proc, the load generator runs in this process);
 *   - lists: GET /v1/messages and GET /v1/notifications (page of 10) after the triggers were delivered;
 *   - idle resident memory after start.
 * Then, because a loaded machine makes those process-level figures noisy, a finer comparison in this one process:
 * two embedded servers (on and off) answer the same requests through app.inject in short interleaved slices, so
 * that load changes on the machine hit both alike; CPU per request from process.cpuUsage (a trigger's slice waits
 * until the worker has delivered it, so its CPU covers the delivery's recorders too).
 * Prints on, off and on/off per figure (the median of the rounds / the total of the slices) and writes
 * bench/results/metrics.json.
 *
 *   node --import tsx bench/metrics.ts [--duration 10] [--rounds 2] [--connections 32] [--slices 20]
 */
const here = dirname(fileURLToPath(import.meta.url));
const HERALD_BIN = join(here, '..', 'bin', 'herald.js');
const SECRET = 'sk_bench_metrics_0123456789abcdef0123456789ab';
const CLOCK_TICKS = 100; // USER_HZ on Linux

interface Options {
  slices: number;
  duration: number;
  rounds: number;
  connections: number;
  output: string;
}

interface VariantRun {
  metrics: 'on' | 'off';
  idleRssMb: number;
  triggersPerSecond: number;
  cpuMsPerTrigger: number;
  delivered: number;
  lists: Record<string, { requestsPerSecond: number; cpuMsPerRequest: number; p99: number }>;
}

function parseOptions(argv: string[]): Options {
  const program = new Command()
    .option('--duration <seconds>', 'seconds per measured load', positiveInteger, 10)
    .option('--rounds <n>', 'rounds (each runs both variants, order alternating; 0 skips them)', (v) => (v === '0' ? 0 : positiveInteger(v)), 2)
    .option('--connections <n>', 'concurrent clients', positiveInteger, 32)
    .option('--slices <n>', 'interleaved slices per variant of the in-process comparison (0 skips it)', (v) => (v === '0' ? 0 : positiveInteger(v)), 20)
    .option('--output <file>', 'JSON results', join(here, 'results', 'metrics.json'))
    .parse(argv);
  return program.opts<Options>();
}

/** CPU seconds (user + system) the process has used, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startHerald(metrics: 'on' | 'off', dataDir: string): Promise<{ child: ChildProcess; url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [HERALD_BIN, 'start'], {
    env: {
      ...process.env,
      HERALD_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
      HERALD_RATE_LIMIT: 'false',
      HERALD_METRICS: metrics,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (const deadline = Date.now() + 60_000; ; ) {
    if (child.exitCode !== null) throw new Error('herald exited during start');
    if (Date.now() > deadline) throw new Error('herald did not start in 60 s');
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) break;
    await sleep(100);
  }
  return {
    child,
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until the process uses under 5 % of a core over half a second (the worker has delivered the backlog). */
async function settle(pid: number): Promise<void> {
  for (let i = 0; i < 240; i++) {
    const before = cpuSeconds(pid);
    await sleep(500);
    if (cpuSeconds(pid) - before < 0.025) return;
  }
}

function triggerLoad(url: string, options: Options, prefix: string): Promise<{ statuses: Record<string, number>; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(here, 'load-worker.mjs'), {
      workerData: {
        url: `${url}/v1/events/trigger`,
        method: 'POST',
        headers: { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' },
        bodies: { template: { name: 'bench-metrics', to: 'sub-__N__', payload: { n: '__N__' } } },
        prefix,
        concurrency: options.connections,
        durationMs: options.duration * 1000,
      },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

async function runVariant(metrics: 'on' | 'off', options: Options, round: number): Promise<VariantRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-metrics-'));
  const herald = await startHerald(metrics, dataDir);
  const pid = herald.child.pid!;
  try {
    const headers = { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' };
    const created = await fetch(`${herald.url}/v2/workflows`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ workflowId: 'bench-metrics', name: 'bench-metrics', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{ payload.n }}' } }] }),
    });
    if (created.status !== 201) throw new Error(`workflow: ${created.status} ${await created.text()}`);
    await settle(pid);
    const idleRssMb = rssMb(pid);

    const cpuBefore = cpuSeconds(pid);
    const load = await triggerLoad(herald.url, options, `r${round}${metrics}`);
    const accepted = load.statuses['201'] ?? 0;
    await settle(pid); // the worker delivers the burst; its CPU belongs to the triggers too
    const cpuTriggers = cpuSeconds(pid) - cpuBefore;

    const lists: VariantRun['lists'] = {};
    for (const [name, path] of [
      ['GET /v1/messages', '/v1/messages?limit=10'],
      ['GET /v1/notifications', '/v1/notifications?limit=10'],
    ] as const) {
      await runHttpLoad({ url: `${herald.url}${path}`, headers, connections: options.connections, durationSeconds: 1 }); // warm-up
      const before = cpuSeconds(pid);
      const result = await runHttpLoad({ url: `${herald.url}${path}`, headers, connections: options.connections, durationSeconds: options.duration });
      const cpu = cpuSeconds(pid) - before;
      if (result.notOk > 0 || result.errors > 0) throw new Error(`${name}: ${JSON.stringify(result.statusCounts)} errors ${result.errors}`);
      lists[name] = { requestsPerSecond: result.requestsPerSecond, cpuMsPerRequest: (cpu * 1000) / result.ok, p99: result.latencyMs.p99 };
    }
    const delivered = await fetch(`${herald.url}/v1/messages?limit=1`, { headers }).then((r) => r.json() as Promise<{ totalCount?: number }>);
    if (metrics === 'on') {
      const scraped = await (await fetch(`${herald.url}/metrics`)).text();
      const counted = Number(/^herald_triggers_total (\d+)/m.exec(scraped)?.[1]);
      if (counted !== accepted) throw new Error(`herald_triggers_total ${counted} but ${accepted} triggers were accepted`);
    }
    return {
      metrics,
      idleRssMb,
      triggersPerSecond: (accepted * 1000) / load.elapsedMs,
      cpuMsPerTrigger: (cpuTriggers * 1000) / accepted,
      delivered: delivered.totalCount ?? NaN,
      lists,
    };
  } finally {
    await herald.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const SLICE_REQUESTS = 200;

async function startInProcess(metrics: 'on' | 'off'): Promise<{ server: RunningServer; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-metrics-inject-'));
  const config = loadConfig({ HERALD_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', HERALD_BOOTSTRAP_SECRET_KEY: SECRET, HERALD_RATE_LIMIT: 'false', HERALD_METRICS: metrics });
  const server = await startServer(config);
  const created = await server.app.inject({
    method: 'POST',
    url: '/v2/workflows',
    headers: { authorization: `ApiKey ${SECRET}` },
    payload: { workflowId: 'bench-metrics', name: 'bench-metrics', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{ payload.n }}' } }] },
  });
  if (created.statusCode !== 201) throw new Error(`workflow: ${created.statusCode} ${created.body}`);
  return { server, dataDir };
}

async function drained(server: RunningServer): Promise<void> {
  const queue = server.container.deps.queue as SqlQueue;
  while ((await queue.pendingCount()) > 0) await sleep(5);
}

/** CPU µs per request of each kind, on and off, over interleaved slices (order alternating per slice). */
async function inProcessComparison(options: Options): Promise<Array<{ name: string; on: number; off: number }>> {
  const servers = { on: await startInProcess('on'), off: await startInProcess('off') };
  const headers = { authorization: `ApiKey ${SECRET}` };
  let n = 0;
  const kinds: Array<{ name: string; run: (server: RunningServer) => Promise<void> }> = [
    {
      name: 'POST /v1/events/trigger (accept + deliver)',
      run: async (server) => {
        for (let i = 0; i < SLICE_REQUESTS; i++) {
          const response = await server.app.inject({ method: 'POST', url: '/v1/events/trigger', headers, payload: { name: 'bench-metrics', to: `sub-${n++ % 500}`, payload: { n } } });
          if (response.statusCode !== 201) throw new Error(`trigger: ${response.statusCode}`);
        }
        await drained(server);
      },
    },
    ...['/v1/messages?limit=10', '/v1/notifications?limit=10'].map((url) => ({
      name: `GET ${url.split('?')[0]}`,
      run: async (server: RunningServer) => {
        for (let i = 0; i < SLICE_REQUESTS; i++) {
          const response = await server.app.inject({ method: 'GET', url, headers });
          if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode}`);
        }
      },
    })),
  ];
  const cpu = new Map<string, { on: number; off: number }>(kinds.map((kind) => [kind.name, { on: 0, off: 0 }]));
  try {
    // Warm-up: data for the lists, JIT for both.
    for (const variant of ['on', 'off'] as const) for (const kind of kinds) await kind.run(servers[variant].server);
    for (let slice = 0; slice < options.slices; slice++) {
      for (const variant of slice % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        for (const kind of kinds) {
          const before = process.cpuUsage();
          await kind.run(servers[variant].server);
          const used = process.cpuUsage(before);
          cpu.get(kind.name)![variant] += used.user + used.system;
        }
      }
    }
  } finally {
    for (const { server, dataDir } of Object.values(servers)) {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const requests = options.slices * SLICE_REQUESTS;
  return [...cpu].map(([name, totals]) => ({ name, on: totals.on / requests, off: totals.off / requests }));
}

/**
 * The recorders alone, timed in a loop: what one list request (one histogram observation) and one delivered in-app
 * trigger (the request, the trigger counter, two job ends, a delivery) add, in µs. A floor for the comparisons above.
 */
function recorderCost(): { listRequestUs: number; triggerUs: number } {
  const metrics = new PromMetrics({ dbPool: () => ({ inUse: 1, waiting: 0 }), logger: { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } });
  const time = (iterations: number, work: (i: number) => void) => {
    for (let i = 0; i < 10_000; i++) work(i);
    const started = performance.now();
    for (let i = 0; i < iterations; i++) work(i);
    return ((performance.now() - started) * 1000) / iterations;
  };
  const list = (i: number) => metrics.httpRequest('GET', '/v1/messages', 200, (i % 100) / 10_000);
  const trigger = (i: number) => {
    metrics.httpRequest('POST', '/v1/events/trigger', 201, (i % 100) / 10_000);
    metrics.triggersAccepted(1);
    metrics.jobFinished('process-trigger', 'completed', (i % 100) / 1000);
    metrics.jobFinished('in_app', 'completed', (i % 100) / 10_000);
    metrics.delivery('in_app', 'novu', 'sent');
  };
  return { listRequestUs: time(200_000, list), triggerUs: time(100_000, trigger) };
}

function fmt(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  // The compiled server, as `npm start` runs it (bin/herald.js falls back to the sources through tsx otherwise).
  await buildServer({ ifStale: true, quiet: true });
  const runs: VariantRun[] = [];
  for (let round = 0; round < options.rounds; round++) {
    for (const metrics of round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
      const run = await runVariant(metrics, options, round);
      runs.push(run);
      process.stderr.write(`round ${round + 1} metrics ${metrics}: ${fmt(run.triggersPerSecond, 0)} triggers/s, ${fmt(run.cpuMsPerTrigger, 3)} CPU ms/trigger\n`);
    }
  }
  const pick = (metrics: 'on' | 'off', read: (run: VariantRun) => number) => median(runs.filter((run) => run.metrics === metrics).map(read));
  const rows: Array<[string, (run: VariantRun) => number, number]> = [
    ['triggers accepted / s', (run) => run.triggersPerSecond, 0],
    ['CPU ms per trigger (accept + deliver)', (run) => run.cpuMsPerTrigger, 3],
    ...Object.keys(runs[0]?.lists ?? {}).flatMap((name): Array<[string, (run: VariantRun) => number, number]> => [
      [`${name} requests / s`, (run) => run.lists[name]!.requestsPerSecond, 0],
      [`${name} CPU ms per request`, (run) => run.lists[name]!.cpuMsPerRequest, 3],
      [`${name} p99 ms`, (run) => run.lists[name]!.p99, 2],
    ]),
    ['idle RSS MB', (run) => run.idleRssMb, 1],
  ];
  const table = runs.length === 0 ? '' : [
    '| figure | metrics on | metrics off | on / off |',
    '|---|---:|---:|---:|',
    ...rows.map(([name, read, digits]) => {
      const on = pick('on', read);
      const off = pick('off', read);
      return `| ${name} | ${fmt(on, digits)} | ${fmt(off, digits)} | ${fmt(on / off, 3)} |`;
    }),
  ].join('\n');
  let inProcess: Array<{ name: string; on: number; off: number }> = [];
  let inProcessTable = '';
  if (options.slices > 0) {
    inProcess = await inProcessComparison(options);
    inProcessTable = [
      '',
      `In one process, ${options.slices} interleaved slices of ${SLICE_REQUESTS} requests per kind and variant (app.inject):`,
      '',
      '| CPU µs per request | metrics on | metrics off | on / off |',
      '|---|---:|---:|---:|',
      ...inProcess.map((row) => `| ${row.name} | ${fmt(row.on, 0)} | ${fmt(row.off, 0)} | ${fmt(row.on / row.off, 3)} |`),
    ].join('\n');
  }
  const recorders = recorderCost();
  const recorderLine = `\nThe recorders alone: ${fmt(recorders.listRequestUs, 2)} µs per request, ${fmt(recorders.triggerUs, 2)} µs per delivered in-app trigger.`;
  const context = `${options.rounds} rounds × ${options.duration} s per load, ${options.connections} connections; ${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`;
  console.log(`${table}\n${inProcessTable}\n${recorderLine}\n\n${context}`);
  mkdirSync(dirname(options.output), { recursive: true });
  writeFileSync(options.output, JSON.stringify({ date: new Date().toISOString(), options, context, runs, inProcess, recorders }, null, 2));
}

await main();
