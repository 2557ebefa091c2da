import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { buildServer } from '../scripts/build-server.mjs';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/main.js';
import { SqlQueue } from '../src/queue/sql-queue.js';
import { PromMetrics } from '../src/observability/metrics.js';
import { runHttpLoad } from './lib/http-load.js';
import { waveClient, type WaveClient } from './lib/wave-load.js';
import { median } from './lib/rounds.js';
import { positiveInteger } from './lib/cli-options.js';

/**
 * `npm run bench:metrics`: what metrics cost (issue 20: under 5 % on triggers and list pages). Two `herald start`
 * processes (embedded, compiled build), one with HERALD_METRICS=on and one with off, run side by side; the same work
 * is sent to each in short slices, alternating which goes first, and each slice's cost is the SERVER's CPU time per
 * operation (all its threads, from /proc/<pid>/task/<tid>/schedstat, in ns):
 *   - triggers: a fixed number of POST /v1/events/trigger (in-app workflow), CPU until the worker has delivered them;
 *   - lists: GET /v1/messages and GET /v1/notifications (page of 10) under load for --slice-seconds, both servers then
 *     holding exactly the same number of messages;
 *   - idle resident memory after start.
 * Why this shape: the machine this runs on is often shared. Throughput and wall time follow whatever else runs; CPU
 * time per operation of the server process much less (not nothing: caches and cores are shared too, see --control),
 * and measuring on and off in adjacent slices exposes both to the same conditions. Each slice gives one on/off ratio; the verdict is the MEDIAN of those ratios (one disturbed
 * slice moves nothing), printed with a distribution-free 95 % confidence interval of that median. Earlier versions ran
 * the variants one after the other in fresh processes (their lists then covered different numbers of messages, and a
 * burst of load elsewhere decided the figure), and compared two servers inside one process through app.inject (they
 * share one heap, one garbage collector and prom-client's process-wide collectors, so one's cost lands on the other);
 * `--in-process` still runs that comparison, reported the same way, as a second opinion.
 * The recorders alone are also timed in a loop: the floor of what metrics can cost.
 * Writes bench/results/metrics.json.
 *
 * `--control` runs both processes with metrics off (an A/A test): its ratios show what the method itself can produce.
 *
 * The load arrives in waves (`bench/lib/wave-load.ts`): --connections requests at once, the next wave when all have
 * answered. Under a closed loop (`--load closed`, autocannon) the embedded server's batching of a turn's requests
 * (read gathering, group commit) settles differently per process and per slice, and with it the CPU per request: the
 * on/off ratios of one-second slices ran from 0.62 to 1.62 (2026-11-26, 8 pairs). Waves make both processes batch alike.
 *
 * `--toggle` measures one process (bench/lib/metrics-toggle-server.ts) whose recording is switched wave by wave (each
 * trigger wave measured until the process's queue has delivered it), so both states share the same
 * JIT state, heap, data and moment. Two processes differ by more than metrics cost even when both have metrics off:
 * the A/A control (`--control`) on a quiet machine gave 1.064 / 1.012 / 1.073 over 4 pairs (2026-11-26 08:40).
 *
 *   node --import tsx bench/metrics.ts [--slices 12] [--slice-seconds 1] [--slice-triggers 300] [--connections 32] [--load waves|closed] [--pairs 1] [--in-process] [--control]
 */
const here = dirname(fileURLToPath(import.meta.url));
const HERALD_BIN = join(here, '..', 'bin', 'herald.js');
const TOGGLE_SERVER = join(here, 'lib', 'metrics-toggle-server.ts');
const SECRET = 'sk_bench_metrics_0123456789abcdef0123456789ab';
/** The goal of issue 20: metrics on may cost at most 5 % more CPU per operation than off. */
const LIMIT = 1.05;
/** How long both processes are watched idle. */
const IDLE_MS = 3000;

interface Options {
  slices: number;
  sliceSeconds: number;
  sliceTriggers: number;
  connections: number;
  inProcess: boolean;
  /** Fresh process pairs, one after the other; their slices are pooled (see --pairs). */
  pairs: number;
  /** Both processes with metrics off: the method's own spread (an A/A test). */
  control: boolean;
  /** One process whose recording is switched on and off between slices (bench/lib/metrics-toggle-server.ts). */
  toggle: boolean;
  /** How the load arrives: in waves of --connections requests (default), or a closed loop (autocannon). */
  load: 'waves' | 'closed';
  output: string;
}

type Variant = 'on' | 'off';

/** One kind of operation's slices: CPU µs per operation of each variant, slice by slice (same index = adjacent). */
interface Series {
  name: string;
  on: number[];
  off: number[];
  /** Operations per second while measured (wall-clock: follows the machine's load, for information only). */
  onRate: number[];
  offRate: number[];
}

interface Summary {
  name: string;
  /** Medians over the slices, CPU µs per operation. */
  on: number;
  off: number;
  /** The median of the per-slice on/off ratios, and its 95 % confidence interval. */
  ratio: number;
  low: number;
  high: number;
  ok: boolean;
  onRate?: number;
  offRate?: number;
}

function parseOptions(argv: string[]): Options {
  const program = new Command()
    .option('--slices <n>', 'interleaved slices per variant and kind', positiveInteger, 12)
    .option('--slice-seconds <s>', 'seconds of load per list slice', positiveInteger, 1)
    .option('--slice-triggers <n>', 'triggers per trigger slice', positiveInteger, 300)
    .option('--connections <n>', 'concurrent clients', positiveInteger, 32)
    .option('--pairs <n>', 'fresh on/off process pairs, started in alternating order; the slices of all pairs are pooled', positiveInteger, 1)
    .option('--in-process', 'also compare two servers in this process through app.inject', false)
    .option('--load <kind>', 'waves: --connections requests at once, the next wave when all have answered; closed: each client sends again as soon as answered (autocannon)', (value: string) => {
      if (value !== 'waves' && value !== 'closed') throw new Error('--load is waves or closed');
      return value;
    }, 'waves')
    .option('--toggle', 'one process, its recording switched on and off between slices, instead of two processes', false)
    .option('--control', 'an A/A test: both processes with HERALD_METRICS=off (the ratios then show the method\'s own spread)', false)
    .option('--output <file>', 'JSON results', join(here, 'results', 'metrics.json'))
    .parse(argv);
  return program.opts<Options>();
}

/**
 * CPU time (ns) the process has used on all its threads: the sum of /proc/<pid>/task/<tid>/schedstat. Nanoseconds,
 * where /proc/<pid>/stat counts 10 ms ticks (1-2 % of a one-second slice). Node's threads live as long as the process.
 */
function cpuNs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return total;
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

interface Herald {
  variant: Variant;
  pid: number;
  url: string;
  dataDir: string;
  /** --connections keep-alive connections for the wave load. */
  waves: WaveClient;
  /** --toggle: switches this one process's recording to the variant about to be measured. */
  select?(variant: Variant): Promise<void>;
  /** --toggle: resolves once the process's queue is empty (every trigger sent so far delivered). */
  drain?(): Promise<void>;
  stop(): Promise<void>;
}

function heraldEnv(dataDir: string, port: number, metrics: Variant): NodeJS.ProcessEnv {
  return {
    ...process.env,
    HERALD_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
    HERALD_RATE_LIMIT: 'false',
    HERALD_METRICS: metrics,
  };
}

/** Waits for /health, then creates the bench's in-app workflow. */
async function prepare(url: string, child: ChildProcess): Promise<void> {
  for (const deadline = Date.now() + 60_000; ; ) {
    if (child.exitCode !== null) throw new Error('herald exited during start');
    if (Date.now() > deadline) throw new Error('herald did not start in 60 s');
    if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) break;
    await sleep(100);
  }
  const created = await fetch(`${url}/v2/workflows`, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ workflowId: 'bench-metrics', name: 'bench-metrics', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{ payload.n }}' } }] }),
  });
  if (created.status !== 201) throw new Error(`workflow: ${created.status} ${await created.text()}`);
}

function heraldOf(child: ChildProcess, variant: Variant, url: string, dataDir: string, connections: number): Herald {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waves = waveClient(url, HEADERS, connections);
  return {
    variant,
    pid: child.pid!,
    url,
    dataDir,
    waves,
    async stop() {
      await waves.close();
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A `herald start` process (the compiled build, as `npm start` runs it). */
async function startHerald(variant: Variant, metrics: Variant, connections: number): Promise<Herald> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-metrics-'));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [HERALD_BIN, 'start'], { env: heraldEnv(dataDir, port, metrics), stdio: ['ignore', 'ignore', 'inherit'] });
  const herald = heraldOf(child, variant, `http://127.0.0.1:${port}`, dataDir, connections);
  await prepare(herald.url, child);
  return herald;
}

/** --toggle: one Herald (from the sources, through tsx) whose recording the parent switches (metrics-toggle-server.ts). */
async function startToggleHerald(connections: number, control: boolean): Promise<Herald> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-metrics-toggle-'));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', TOGGLE_SERVER], { env: heraldEnv(dataDir, port, 'on'), stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const herald = heraldOf(child, 'on', `http://127.0.0.1:${port}`, dataDir, connections);
  await prepare(herald.url, child);
  const ask = (message: string) =>
    new Promise<void>((resolve) => {
      child.once('message', () => resolve());
      child.send(message);
    });
  herald.select = (variant) => ask(control ? 'off' : variant);
  herald.drain = () => ask('drain');
  return herald;
}

const HEADERS = { authorization: `ApiKey ${SECRET}`, 'content-type': 'application/json' };

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until the process uses under 5 % of a core over a quarter of a second (the worker has delivered the backlog). */
async function settle(pid: number): Promise<void> {
  for (let i = 0; i < 480; i++) {
    const before = cpuNs(pid);
    await sleep(250);
    if (cpuNs(pid) - before < 12.5e6) return;
  }
}

/**
 * Exactly `count` triggers (subscribers sub-0 … sub-499, created on first use), `connections` at a time: in waves (a
 * whole number of them; `count` is a multiple of `connections`, see triggersPerSlice) or as a closed loop.
 */
async function sendTriggers(herald: Herald, count: number, connections: number, first: number, load: Options['load']): Promise<void> {
  if (load === 'waves') {
    const result = await herald.waves.run({
      waves: count / connections,
      request: (i) => ({ method: 'POST', path: '/v1/events/trigger', body: JSON.stringify({ name: 'bench-metrics', to: `sub-${(first + i) % 500}`, payload: { n: first + i } }) }),
    });
    if (result.ok !== count) throw new Error(`trigger: ${JSON.stringify(result.statusCounts)}`);
    return;
  }
  let next = 0;
  const client = async () => {
    while (next < count) {
      const n = first + next++;
      const response = await fetch(`${herald.url}/v1/events/trigger`, {
        method: 'POST',
        headers: HEADERS,
        body: JSON.stringify({ name: 'bench-metrics', to: `sub-${n % 500}`, payload: { n } }),
      });
      if (response.status !== 201) throw new Error(`trigger: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
}

const LISTS = [
  ['GET /v1/messages', '/v1/messages?limit=10'],
  ['GET /v1/notifications', '/v1/notifications?limit=10'],
] as const;

/** Both processes side by side, the same slices sent to each, order alternating per slice. */
async function processComparison(options: Options, onFirst = true): Promise<{ series: Series[]; idleRssMb: Record<Variant, number>; idleCpuMsPerS: Record<Variant, number>; triggersCounted: number }> {
  let heralds: Record<Variant, Herald>;
  if (options.toggle) {
    const herald = await startToggleHerald(options.connections, options.control);
    heralds = { on: herald, off: herald };
  } else {
    const startOn = () => startHerald('on', options.control ? 'off' : 'on', options.connections);
    const startOff = () => startHerald('off', 'off', options.connections);
    const [first, second] = onFirst ? [await startOn(), await startOff()] : [await startOff(), await startOn()];
    heralds = onFirst ? { on: first, off: second } : { on: second, off: first };
  }
  const distinct = [...new Set(Object.values(heralds))];
  try {
    for (const herald of distinct) await settle(herald.pid);
    const idleRssMb = { on: rssMb(heralds.on.pid), off: rssMb(heralds.off.pid) };
    // What runs with no request at all (prom-client's event-loop-delay sampling, the queue's and sweeper's timers).
    const idleBefore = { on: cpuNs(heralds.on.pid), off: cpuNs(heralds.off.pid) };
    await sleep(IDLE_MS);
    const idleCpuMsPerS = { on: (cpuNs(heralds.on.pid) - idleBefore.on) / 1e6 / (IDLE_MS / 1000), off: (cpuNs(heralds.off.pid) - idleBefore.off) / 1e6 / (IDLE_MS / 1000) };
    const newSeries = (name: string): Series => ({ name, on: [], off: [], onRate: [], offRate: [] });
    const triggers = newSeries('POST /v1/events/trigger (accept + deliver)');
    const lists = LISTS.map(([name]) => newSeries(name));
    // Triggers per slice: a whole number of waves.
    const perSlice = options.load === 'waves' ? Math.max(1, Math.round(options.sliceTriggers / options.connections)) * options.connections : options.sliceTriggers;
    const listLoad = async (herald: Herald, path: string, seconds: number) => {
      if (options.load === 'waves') return herald.waves.run({ seconds, request: () => ({ method: 'GET', path }) });
      return runHttpLoad({ url: `${herald.url}${path}`, headers: HEADERS, connections: options.connections, durationSeconds: seconds });
    };
    // Warm-up (JIT, the first subscribers, data for the lists, the wave connections): one trigger slice and a short
    // load of each list.
    let sent = 0;
    for (const herald of distinct) {
      await herald.select?.('on');
      await sendTriggers(herald, perSlice, options.connections, 0, options.load);
      await settle(herald.pid);
      for (const [, path] of LISTS) await listLoad(herald, path, 1);
    }
    sent += perSlice;
    for (let slice = 0; slice < options.slices; slice++) {
      const order = slice % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      if (options.toggle && options.load === 'waves') {
        // Wave by wave as for the lists (on, off, off, on, …), each wave measured until the queue has delivered it.
        const herald = heralds.on;
        const used = { on: 0, off: 0 };
        const started = performance.now();
        for (let wave = 0; wave < (2 * perSlice) / options.connections; wave++) {
          const variant: Variant = wave % 4 === 0 || wave % 4 === 3 ? 'on' : 'off';
          await herald.select!(variant);
          const before = cpuNs(herald.pid);
          const first = 2 * sent + wave * options.connections;
          const result = await herald.waves.run({
            waves: 1,
            request: (i) => ({ method: 'POST', path: '/v1/events/trigger', body: JSON.stringify({ name: 'bench-metrics', to: `sub-${(first + i) % 500}`, payload: { n: first + i } }) }),
          });
          if (result.ok !== options.connections) throw new Error(`trigger: ${JSON.stringify(result.statusCounts)}`);
          await herald.drain!();
          used[variant] += cpuNs(herald.pid) - before;
        }
        const seconds = (performance.now() - started) / 1000;
        for (const variant of ['on', 'off'] as const) {
          triggers[variant].push(used[variant] / 1000 / perSlice);
          triggers[`${variant}Rate`].push(perSlice / seconds);
        }
      } else {
        for (const variant of order) {
          const { pid } = heralds[variant];
          await heralds[variant].select?.(variant);
          const started = performance.now();
          const before = cpuNs(pid);
          await sendTriggers(heralds[variant], perSlice, options.connections, sent, options.load);
          const acceptedMs = performance.now() - started;
          await settle(pid);
          triggers[variant].push((cpuNs(pid) - before) / 1000 / perSlice);
          triggers[`${variant}Rate`].push((perSlice * 1000) / acceptedMs);
        }
      }
      sent += perSlice;
      for (const [index, [name, path]] of LISTS.entries()) {
        if (options.toggle && options.load === 'waves') {
          // One process: its recording switched wave by wave (on, off, off, on, …), so that both states share the
          // machine's conditions of each moment, not of alternate seconds (a quiet machine's single slices still
          // moved ±20 % against each other); the slice lasts both states' time.
          const herald = heralds.on;
          const used = { on: 0, off: 0 };
          const answered = { on: 0, off: 0 };
          const started = performance.now();
          for (let wave = 0; performance.now() - started < 2 * options.sliceSeconds * 1000; wave++) {
            const variant: Variant = wave % 4 === 0 || wave % 4 === 3 ? 'on' : 'off';
            await herald.select!(variant);
            const before = cpuNs(herald.pid);
            const result = await herald.waves.run({ waves: 1, request: () => ({ method: 'GET', path }) });
            used[variant] += cpuNs(herald.pid) - before;
            if (result.notOk > 0) throw new Error(`${name}: ${JSON.stringify(result.statusCounts)}`);
            answered[variant] += result.ok;
          }
          const seconds = (performance.now() - started) / 1000;
          for (const variant of ['on', 'off'] as const) {
            lists[index]![variant].push(used[variant] / 1000 / answered[variant]);
            lists[index]![`${variant}Rate`].push(answered[variant] / seconds);
          }
          continue;
        }
        for (const variant of order) {
          const { pid } = heralds[variant];
          await heralds[variant].select?.(variant);
          const before = cpuNs(pid);
          const result = await listLoad(heralds[variant], path, options.sliceSeconds);
          const used = cpuNs(pid) - before;
          if (result.notOk > 0 || ('errors' in result && result.errors > 0)) throw new Error(`${name}: ${JSON.stringify(result.statusCounts)}`);
          lists[index]![variant].push(used / 1000 / result.ok);
          lists[index]![`${variant}Rate`].push(result.requestsPerSecond);
        }
      }
      process.stderr.write(`slice ${slice + 1}/${options.slices}: ${[triggers, ...lists].map((s) => `${s.name.split(' (')[0]} ${fmt(s.on.at(-1)! / s.off.at(-1)!, 3)}`).join(', ')}\n`);
    }
    // The recorders really ran: every accepted trigger is counted on the metrics side.
    const scraped = options.control ? '' : await (await fetch(`${heralds.on.url}/metrics`)).text();
    const triggersCounted = options.control ? NaN : Number(/^herald_triggers_total (\d+)/m.exec(scraped)?.[1]);
    if (!options.control && triggersCounted !== sent) throw new Error(`herald_triggers_total ${triggersCounted} but ${sent} triggers were accepted`);
    return { series: [triggers, ...lists], idleRssMb, idleCpuMsPerS, triggersCounted };
  } finally {
    await Promise.all(distinct.map((herald) => herald.stop()));
  }
}

const SLICE_REQUESTS = 200;

async function startInProcess(metrics: Variant): Promise<{ server: RunningServer; dataDir: string }> {
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

/** The second opinion: CPU µs per request of each kind, two servers in this process, interleaved slices of app.inject. */
async function inProcessComparison(options: Options): Promise<Series[]> {
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
    ...LISTS.map(([name, url]) => ({
      name,
      run: async (server: RunningServer) => {
        for (let i = 0; i < SLICE_REQUESTS; i++) {
          const response = await server.app.inject({ method: 'GET', url, headers });
          if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode}`);
        }
      },
    })),
  ];
  const series = kinds.map((kind): Series => ({ name: kind.name, on: [], off: [], onRate: [], offRate: [] }));
  try {
    // Warm-up: data for the lists, JIT for both.
    for (const variant of ['on', 'off'] as const) for (const kind of kinds) await kind.run(servers[variant].server);
    for (let slice = 0; slice < options.slices; slice++) {
      for (const variant of slice % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        for (const [index, kind] of kinds.entries()) {
          const started = performance.now();
          const before = process.cpuUsage();
          await kind.run(servers[variant].server);
          const used = process.cpuUsage(before);
          series[index]![variant].push((used.user + used.system) / SLICE_REQUESTS);
          series[index]![`${variant}Rate`].push((SLICE_REQUESTS * 1000) / (performance.now() - started));
        }
      }
    }
  } finally {
    for (const { server, dataDir } of Object.values(servers)) {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return series;
}

/**
 * The median of the per-slice ratios and a distribution-free 95 % confidence interval of it: the k-th smallest and
 * k-th largest ratio, k the largest with P(Binomial(n, 1/2) < k) <= 2.5 % (for n < 6 no such k: the full range).
 */
function summarize(series: Series): Summary {
  const ratios = series.on.map((on, i) => on / series.off[i]!).sort((a, b) => a - b);
  const n = ratios.length;
  let k = 0;
  let below = 0; // P(X < k+1) as k grows
  const choose = (m: number) => {
    let c = 1;
    for (let i = 1; i <= m; i++) c = (c * (n - m + i)) / i;
    return c;
  };
  while (k < n && (below += choose(k) / 2 ** n) <= 0.025) k++;
  const ratio = median(ratios);
  return {
    name: series.name,
    on: median(series.on),
    off: median(series.off),
    ratio,
    low: ratios[Math.max(k - 1, 0)]!,
    high: ratios[n - Math.max(k, 1)]!,
    ok: ratio < LIMIT,
    onRate: series.onRate.length ? median(series.onRate) : undefined,
    offRate: series.offRate.length ? median(series.offRate) : undefined,
  };
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

function table(title: string, rows: Summary[], rates: boolean): string {
  return [
    title,
    '',
    `| CPU µs per operation (median of slices) | metrics on | metrics off | on / off (median of slice ratios) | 95 % CI | < 5 % |${rates ? ' ops/s on / off |' : ''}`,
    `|---|---:|---:|---:|---:|---|${rates ? '---:|' : ''}`,
    ...rows.map(
      (row) =>
        `| ${row.name} | ${fmt(row.on, 0)} | ${fmt(row.off, 0)} | ${fmt(row.ratio, 3)} | ${fmt(row.low, 3)}–${fmt(row.high, 3)} | ${row.ok ? 'ok' : 'NOT OK'} |` +
        (rates ? ` ${fmt(row.onRate!, 0)} / ${fmt(row.offRate!, 0)} |` : ''),
    ),
  ].join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  // The compiled server, as `npm start` runs it (bin/herald.js falls back to the sources through tsx otherwise).
  await buildServer({ ifStale: true, quiet: true });
  const loadBefore = loadavg();
  // With read gathering (src/http/read-gathering.ts) a process's CPU per request depends on how many requests its turns
  // gather, which settles differently per process: one pair's ratio moved 0.80-1.30 between runs, so --pairs pools
  // the slices of several fresh pairs, started in alternating order.
  let processes = await processComparison(options, true);
  for (let pair = 1; pair < options.pairs; pair++) {
    const next = await processComparison(options, pair % 2 === 0);
    processes = {
      series: processes.series.map((series, index) => {
        const more = next.series[index]!;
        return { name: series.name, on: [...series.on, ...more.on], off: [...series.off, ...more.off], onRate: [...series.onRate, ...more.onRate], offRate: [...series.offRate, ...more.offRate] };
      }),
      idleRssMb: processes.idleRssMb,
      idleCpuMsPerS: { on: processes.idleCpuMsPerS.on + next.idleCpuMsPerS.on, off: processes.idleCpuMsPerS.off + next.idleCpuMsPerS.off },
      triggersCounted: processes.triggersCounted + next.triggersCounted,
    };
  }
  const processRows = processes.series.map(summarize);
  const out = [
    table(
      `${options.control ? 'CONTROL (A/A: both processes with metrics off). ' : ''}${options.toggle ? `One process, its recording switched on and off between slices${options.pairs > 1 ? ` (${options.pairs} fresh processes, slices pooled)` : ''}` : `Two processes side by side${options.pairs > 1 ? ` (${options.pairs} fresh pairs, slices pooled)` : ''}`}, ${options.slices * options.pairs} interleaved slices per kind and variant (${options.load === 'waves' ? `load in waves of ${options.connections}` : `closed loop of ${options.connections} clients`}; ${options.sliceTriggers} triggers; ${options.sliceSeconds} s of lists), CPU of the server process (all threads):`,
      processRows,
      true,
    ),
    '',
    `Idle RSS MB: on ${fmt(processes.idleRssMb.on, 1)}, off ${fmt(processes.idleRssMb.off, 1)}${options.toggle ? '' : `; idle CPU ms per second (mean of ${options.pairs} pair${options.pairs > 1 ? 's' : ''}): on ${fmt(processes.idleCpuMsPerS.on / options.pairs, 3)}, off ${fmt(processes.idleCpuMsPerS.off / options.pairs, 3)}`}; herald_triggers_total = ${processes.triggersCounted} = triggers accepted.`,
  ];
  let inProcessRows: Summary[] = [];
  if (options.inProcess) {
    inProcessRows = (await inProcessComparison(options)).map(summarize);
    out.push('', table(`In one process (app.inject, shared heap and collectors), ${options.slices} interleaved slices of ${SLICE_REQUESTS} requests:`, inProcessRows, false));
  }
  const recorders = recorderCost();
  const context = `${options.connections} connections; ${cpus().length} CPUs, load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')} before, ${loadavg().map((l) => l.toFixed(1)).join(' ')} after`;
  out.push('', `The recorders alone: ${fmt(recorders.listRequestUs, 2)} µs per request, ${fmt(recorders.triggerUs, 2)} µs per delivered in-app trigger.`, '', context);
  console.log(out.join('\n'));
  mkdirSync(dirname(options.output), { recursive: true });
  writeFileSync(
    options.output,
    JSON.stringify({ date: new Date().toISOString(), options, context, processes: { ...processes, summary: processRows }, inProcess: inProcessRows, recorders }, null, 2),
  );
  if (![...processRows, ...inProcessRows].every((row) => row.ok)) process.exitCode = 1;
}

await main();
