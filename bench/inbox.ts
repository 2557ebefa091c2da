import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import inspector from 'node:inspector';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import pg from 'pg';
import { io as socketIo } from 'socket.io-client';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { createContainer, type Container } from '../src/container.js';
import { systemClock } from '../src/domain/clock.js';
import { newId } from '../src/domain/ids.js';
import type { Message, Subscriber } from '../src/domain/types.js';
import { buildApp } from '../src/http/app.js';
import { SecretBox, parseMasterKey } from '../src/store/secret-box.js';
import { createSubscriberToken } from '../src/usecases/auth/subscriber-tokens.js';
import { bootstrapTenancy } from '../src/usecases/tenancy/bootstrap-tenancy.js';
import { startHerald, type HeraldProcess } from '../test/helpers/herald-process.js';
import { startScaleoutProcesses, type ScaleoutProcesses } from '../test/helpers/scaleout-processes.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { HttpLoadOptions, HttpLoadResult } from './lib/http-load.js';
import { median } from './lib/rounds.js';
import { benchMode, positiveInteger } from './lib/cli-options.js';
import { buildServer } from '../scripts/build-server.mjs';

/**
 * `npm run bench:inbox`: the Inbox's costs (issue 14, point 8), in three parts.
 *
 * - http: with `--messages` in-app messages (100,000) over `--subscribers` (10,000), GET /v1/inbox/notifications (the
 *   page the `<Inbox />` asks for first) and GET /v1/inbox/notifications/count (the bell's four severity filters), each
 *   paired with a bare Fastify route answering the same bytes, measured right before it with the same load, in rounds;
 *   between them two floors inside Herald's app answering the same bytes (every hook; every hook and the token).
 *   In-process server as `bench:lists` runs it; the load comes from a worker thread.
 * - latency: trigger → `notification_received` at a socket.io client, one trigger at a time (unsaturated), against a
 *   real `herald start` (embedded) or `herald api` + `herald worker` processes (scale-out: the worker makes the message,
 *   the API process holds the socket). Measured from before the trigger's POST to the event's arrival, and to the
 *   `unread_count_changed` that counts the new message (the bell's update).
 * - sockets: idle sockets opened to one server process (`herald start` embedded, `herald api` scale-out), each
 *   authenticated as its own subscriber, and that process's RSS (from /proc) at every 1,000 sockets.
 *
 *   node --import tsx bench/inbox.ts [--mode embedded|scaleout] [--parts http,latency,sockets] [--sockets 10000]
 *
 * The herald processes run the compiled build, as `npm start` does (built first when stale); `--from-source` runs them
 * from the sources through tsx.
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_inbox_0123456789abcdef0123456789abcdef';
const POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379/0';
const WORKFLOW = 'bench-inbox';

type Mode = 'embedded' | 'scaleout';
type Part = 'http' | 'latency' | 'sockets';

interface Options {
  mode: Mode;
  parts: Part[];
  messages: number;
  subscribers: number;
  duration: number;
  warmup: number;
  rounds: number;
  connections: number;
  samples: number;
  sockets: number;
  output?: string;
  profile?: string;
  fromSource: boolean;
}

function parseOptions(argv: string[]): Options {
  const program = new Command()
    .name('bench:inbox')
    .option('--mode <mode>', 'embedded (SQLite) or scaleout (PostgreSQL + Redis)', benchMode, 'embedded')
    .option('--parts <list>', 'comma-separated: http, latency, sockets', (value) => {
      const parts = value.split(',').map((part) => part.trim());
      for (const part of parts) if (!['http', 'latency', 'sockets'].includes(part)) throw new InvalidArgumentError(`unknown part ${part}`);
      return parts;
    }, ['http', 'latency', 'sockets'])
    .option('--messages <n>', 'in-app messages seeded for the http part', positiveInteger, 100_000)
    .option('--subscribers <n>', 'subscribers they are spread over', positiveInteger, 10_000)
    .option('--duration <seconds>', 'measured load per endpoint and round', positiveInteger, 5)
    .option('--warmup <seconds>', 'unmeasured load before each measurement', positiveInteger, 1)
    .option('--rounds <n>', 'rounds per endpoint; figures are their medians', positiveInteger, 3)
    .option('--connections <n>', 'concurrent keep-alive HTTP clients', positiveInteger, 10)
    .option('--samples <n>', 'triggers timed in the latency part', positiveInteger, 300)
    .option('--sockets <n>', 'idle sockets opened in the sockets part', positiveInteger, 10_000)
    .option('--output <file>', 'JSON results file (default bench/results/inbox-<mode>.json)')
    .option('--profile <dir>', "write a CPU profile (.cpuprofile) of the server during each measured run of Herald's routes")
    .option('--from-source', 'run the herald processes from the TypeScript sources (tsx) instead of the compiled build', false)
    .parse(argv);
  return program.opts<Options>();
}

const execFileAsync = promisify(execFile);

/**
 * The load generator runs in a child process: this process then holds only the servers, and its CPU time during a
 * run is theirs. Returns the run and the CPU time this process spent in it.
 */
async function loadFromChild(options: HttpLoadOptions): Promise<{ result: HttpLoadResult; cpuMs: number }> {
  const started = process.cpuUsage();
  const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', join(here, 'lib', 'http-load-child.ts'), JSON.stringify(options)], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const used = process.cpuUsage(started);
  return { result: JSON.parse(stdout) as HttpLoadResult, cpuMs: (used.user + used.system) / 1000 };
}

const log = (message: string) => process.stderr.write(`[bench:inbox ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
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

/** Starts the V8 CPU profiler in this process (the server's); the returned function stops it and answers the profile. */
async function startProfile(): Promise<() => Promise<object>> {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  return async () => {
    const { profile } = await post('Profiler.stop');
    session.disconnect();
    return profile;
  };
}

// ---- http: list and count against the same bytes from a bare route -------------------------------------------

interface HttpMeasurement {
  name: string;
  path: string;
  responseBytes: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  bareRequestsPerSecond: number;
  bareP99: number;
  ratioToBare: number;
  /** Server CPU per answered request (this process, the load generator excluded), and the bare route's. */
  cpuMicrosPerRequest: number;
  bareCpuMicrosPerRequest: number;
  /** bare CPU per request / route CPU per request: the throughput ratio of two servers that each had the CPU to themselves. */
  cpuRatioToBare: number;
  notOk: number;
  errors: number;
  /**
   * The same bytes answered by a route inside Herald's app: `public` runs every hook but auth has nothing to check,
   * `subscriber` also verifies the subscriber token. Ratios to the bare route of the same round; medians.
   */
  /** The same route of an app without the read cache (every request reads the store). */
  withoutReadCache: ReturnType<typeof floorSummary>;
  floors: {
    public: { requestsPerSecond: number; ratioToBare: number; cpuMicrosPerRequest: number; cpuRatioToBare: number };
    subscriber: { requestsPerSecond: number; ratioToBare: number; cpuMicrosPerRequest: number; cpuRatioToBare: number };
  };
  rounds: Array<{ requestsPerSecond: number; bareRequestsPerSecond: number; ratioToBare: number; cpuRatioToBare: number }>;
}

function floorSummary(pairs: Array<{ floor: HttpLoadResult & { cpuMicrosPerRequest: number }; bare: HttpLoadResult & { cpuMicrosPerRequest: number } }>) {
  return {
    requestsPerSecond: Math.round(median(pairs.map((pair) => pair.floor.requestsPerSecond))),
    ratioToBare: round(median(pairs.map((pair) => pair.floor.requestsPerSecond / pair.bare.requestsPerSecond)), 3),
    cpuMicrosPerRequest: Math.round(median(pairs.map((pair) => pair.floor.cpuMicrosPerRequest))),
    cpuRatioToBare: round(median(pairs.map((pair) => pair.bare.cpuMicrosPerRequest / pair.floor.cpuMicrosPerRequest)), 3),
  };
}

/** One in-app message of the seed: subscriber `index % subscribers`, every third read, severities in turn. */
function seedMessage(scope: { environmentId: string; organizationId: string }, subscriber: Subscriber, index: number, createdMs: number): Message {
  const createdAt = new Date(createdMs).toISOString();
  const severities = ['high', 'medium', 'low', 'none'];
  return {
    _id: newId(createdMs),
    _templateId: null,
    _environmentId: scope.environmentId,
    _messageTemplateId: null,
    _organizationId: scope.organizationId,
    _notificationId: newId(createdMs),
    _subscriberId: subscriber._id,
    _jobId: newId(createdMs),
    subscriber,
    templateIdentifier: WORKFLOW,
    createdAt,
    updatedAt: createdAt,
    deliveredAt: [createdAt],
    content: `Bench message ${index}: your weekly report is ready to read`,
    subject: `Report ${index}`,
    transactionId: randomUUID(),
    channel: 'in_app',
    read: index % 3 === 0,
    seen: index % 3 === 0,
    cta: { type: 'redirect', data: { url: `https://example.com/reports/${index}` } },
    _feedId: null,
    status: 'sent',
    payload: { report: index },
    overrides: {},
    contextKeys: [],
    ...({ severity: severities[index % 4], tags: ['reports'], data: { report: index } } as Partial<Message>),
  };
}

async function runHttpPart(options: Options): Promise<{ seedSeconds: number; measurements: HttpMeasurement[] }> {
  const suffix = randomBytes(5).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-inbox-'));
  let schema: string | undefined;
  const env: Record<string, string> = { HERALD_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', HERALD_BOOTSTRAP_SECRET_KEY: SECRET, HERALD_RATE_LIMIT: 'false' };
  if (options.mode === 'scaleout') {
    schema = `herald_bench_${suffix}`;
    await withPostgres((client) => client.query(`create schema ${schema}`));
    env.DATABASE_URL = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    env.REDIS_URL = REDIS_URL;
  }
  const container: Container = await createContainer(loadConfig(env), { redisPrefix: `herald_bench_${suffix}` });
  const { deps } = container;
  const bare = Fastify({ logger: false });
  const bareBodies = new Map<string, { body: string; contentType: string }>();
  bare.get('/same-bytes/:name', async (request, reply) => {
    const entry = bareBodies.get((request.params as { name: string }).name)!;
    return reply.type(entry.contentType).send(entry.body);
  });
  // Two floors inside Herald's own app, answering the same bytes: every hook (CORS, cookies, auth, audit,
  // idempotency, logging) on a public route, and the same with the subscriber token checked. They show how much of
  // the gap to the bare route is the app's plumbing and how much the Inbox's work.
  const floorRoutes = async (instance: FastifyInstance) => {
    const same = async (request: FastifyRequest, reply: FastifyReply) => {
      const entry = bareBodies.get((request.params as { name: string }).name)!;
      return reply.type(entry.contentType).send(entry.body);
    };
    instance.get('/v1/inbox/bench-floor/public/:name', { config: { public: true } }, same);
    instance.get('/v1/inbox/bench-floor/subscriber/:name', { config: { subscriber: true } }, same);
  };
  // Herald as `herald start` serves it: with the container's realtime fan-out (the socket endpoint, and in embedded
  // mode the Inbox read cache that rides on it). A second app without it reads the store on every request: what the
  // first read of a page, or any read after a change, costs.
  const app = await buildApp(deps, { logger: deps.logger, extraRoutes: [floorRoutes], realtime: container.realtime });
  const uncachedApp = await buildApp(deps, { logger: deps.logger });
  try {
    await bootstrapTenancy(deps, { bootstrapSecretKey: SECRET });
    const environment = (await deps.store.tenancy.findEnvironmentByName('development'))!;
    const scope = { environmentId: environment._id, organizationId: environment._organizationId };

    const seedStarted = Date.now();
    const originMs = Date.now() - options.messages * 1000;
    const subscribers: Subscriber[] = [];
    for (let index = 0; index < options.subscribers; index++) {
      const at = new Date(originMs).toISOString();
      const subscriber: Subscriber = {
        _id: newId(originMs),
        _organizationId: scope.organizationId,
        _environmentId: scope.environmentId,
        subscriberId: `bench-${index}`,
        firstName: `First${index}`,
        lastName: `Last${index}`,
        email: `bench${index}@example.com`,
        channels: [],
        topics: [],
        __v: 0,
        deleted: false,
        createdAt: at,
        updatedAt: at,
      };
      await deps.store.subscribers.create(subscriber);
      subscribers.push(subscriber);
    }
    const batch = 1000;
    for (let start = 0; start < options.messages; start += batch) {
      const messages: Message[] = [];
      for (let index = start; index < Math.min(options.messages, start + batch); index++) {
        messages.push(seedMessage(scope, subscribers[index % subscribers.length]!, index, originMs + index * 1000));
      }
      await deps.store.transaction((store) => store.messages.createMany(messages));
      if ((start / batch) % 20 === 0) log(`seeded ${start + messages.length}/${options.messages} messages`);
    }
    // PostgreSQL: the statistics autovacuum would have gathered by then (as bench:lists does). Without them the planner
    // reads the first page through messages_env_created (newest first for the whole environment, filtered by
    // subscriber) instead of messages_inbox.
    if (schema) await withPostgres((client) => client.query(`vacuum analyze ${schema}.messages, ${schema}.subscribers`));
    const seedSeconds = round((Date.now() - seedStarted) / 1000, 1);
    log(`seeded ${options.subscribers} subscribers and ${options.messages} in-app messages in ${seedSeconds} s`);

    const probe = subscribers[0]!;
    const token = await createSubscriberToken(deps, { ...scope, subscriberRecordId: probe._id, subscriberId: probe.subscriberId });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const uncachedUrl = await uncachedApp.listen({ host: '127.0.0.1', port: 0 });
    const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 });
    const bellFilters = ['high', 'medium', 'low', 'none'].map((severity) => ({ read: false, archived: false, snoozed: false, severity }));
    const endpoints = [
      { name: 'GET /v1/inbox/notifications (first page)', key: 'list', path: '/v1/inbox/notifications?limit=10&archived=false&snoozed=false' },
      { name: 'GET /v1/inbox/notifications/count (bell filters)', key: 'count', path: `/v1/inbox/notifications/count?filters=${encodeURIComponent(JSON.stringify(bellFilters))}` },
    ];
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'novu-api-version': '2024-06-26', 'novu-client-version': '@novu/js@3.19.2' };
    for (const endpoint of endpoints) {
      const response = await fetch(url + endpoint.path, { headers });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${endpoint.name}: ${response.status} ${body.slice(0, 500)}`);
      if (endpoint.key === 'list' && JSON.parse(body).data.length === 0) throw new Error(`${endpoint.name}: empty page`);
      bareBodies.set(endpoint.key, { body, contentType: response.headers.get('content-type') ?? 'application/json' });
    }

    const measure = async (target: string, withHeaders: Record<string, string>, profileName?: string) => {
      if (options.warmup > 0) await loadFromChild({ url: target, headers: withHeaders, connections: options.connections, durationSeconds: options.warmup });
      const stopProfile = options.profile && profileName ? await startProfile() : undefined;
      const { result, cpuMs } = await loadFromChild({ url: target, headers: withHeaders, connections: options.connections, durationSeconds: options.duration });
      if (stopProfile) {
        mkdirSync(options.profile!, { recursive: true });
        writeFileSync(join(options.profile!, `${profileName}.cpuprofile`), JSON.stringify(await stopProfile()));
      }
      return { ...result, cpuMicrosPerRequest: (cpuMs * 1000) / Math.max(1, result.ok + result.notOk) };
    };
    const measurements: HttpMeasurement[] = [];
    type Run = HttpLoadResult & { cpuMicrosPerRequest: number };
    const runs = new Map<string, Array<{ result: Run; bare: Run; publicFloor: Run; subscriberFloor: Run; uncached: Run }>>();
    for (let roundIndex = 1; roundIndex <= options.rounds; roundIndex++) {
      for (const endpoint of endpoints) {
        const bareResult = await measure(`${bareUrl}/same-bytes/${endpoint.key}`, {});
        const publicFloor = await measure(`${url}/v1/inbox/bench-floor/public/${endpoint.key}`, headers);
        const subscriberFloor = await measure(`${url}/v1/inbox/bench-floor/subscriber/${endpoint.key}`, headers);
        const result = await measure(url + endpoint.path, headers, `${endpoint.key}-round${roundIndex}`);
        const uncached = await measure(uncachedUrl + endpoint.path, headers, `${endpoint.key}-uncached-round${roundIndex}`);
        runs.set(endpoint.key, [...(runs.get(endpoint.key) ?? []), { result, bare: bareResult, publicFloor, subscriberFloor, uncached }]);
        log(
          `round ${roundIndex}/${options.rounds} ${endpoint.name} floors, same bytes from Herald's app: public route ${Math.round(publicFloor.requestsPerSecond)} req/s ` +
            `(${(publicFloor.requestsPerSecond / bareResult.requestsPerSecond).toFixed(2)} of bare, CPU ${Math.round(publicFloor.cpuMicrosPerRequest)} µs), ` +
            `subscriber-token route ${Math.round(subscriberFloor.requestsPerSecond)} req/s (${(subscriberFloor.requestsPerSecond / bareResult.requestsPerSecond).toFixed(2)}, CPU ${Math.round(subscriberFloor.cpuMicrosPerRequest)} µs)`,
        );
        log(
          `round ${roundIndex}/${options.rounds} ${endpoint.name}: ${Math.round(result.requestsPerSecond)} req/s against bare ${Math.round(bareResult.requestsPerSecond)} ` +
            `(${(result.requestsPerSecond / bareResult.requestsPerSecond).toFixed(2)}), p99 ${result.latencyMs.p99.toFixed(2)} ms; ` +
            `CPU ${Math.round(result.cpuMicrosPerRequest)} µs/request against bare ${Math.round(bareResult.cpuMicrosPerRequest)} ` +
            `(${(bareResult.cpuMicrosPerRequest / result.cpuMicrosPerRequest).toFixed(2)})` +
            `${result.notOk || result.errors ? `, NOT OK ${JSON.stringify(result.statusCounts)} errors ${result.errors}` : ''}`,
        );
        log(
          `round ${roundIndex}/${options.rounds} ${endpoint.name} without the read cache: ${Math.round(uncached.requestsPerSecond)} req/s ` +
            `(${(uncached.requestsPerSecond / bareResult.requestsPerSecond).toFixed(2)} of bare), CPU ${Math.round(uncached.cpuMicrosPerRequest)} µs/request` +
            `${uncached.notOk || uncached.errors ? `, NOT OK ${JSON.stringify(uncached.statusCounts)} errors ${uncached.errors}` : ''}`,
        );
      }
    }
    for (const endpoint of endpoints) {
      const pairs = runs.get(endpoint.key)!;
      measurements.push({
        name: endpoint.name,
        path: endpoint.path,
        responseBytes: Buffer.byteLength(bareBodies.get(endpoint.key)!.body),
        requestsPerSecond: Math.round(median(pairs.map((pair) => pair.result.requestsPerSecond))),
        p50: round(median(pairs.map((pair) => pair.result.latencyMs.p50)), 2),
        p99: round(median(pairs.map((pair) => pair.result.latencyMs.p99)), 2),
        bareRequestsPerSecond: Math.round(median(pairs.map((pair) => pair.bare.requestsPerSecond))),
        bareP99: round(median(pairs.map((pair) => pair.bare.latencyMs.p99)), 2),
        ratioToBare: round(median(pairs.map((pair) => pair.result.requestsPerSecond / pair.bare.requestsPerSecond)), 3),
        cpuMicrosPerRequest: Math.round(median(pairs.map((pair) => pair.result.cpuMicrosPerRequest))),
        bareCpuMicrosPerRequest: Math.round(median(pairs.map((pair) => pair.bare.cpuMicrosPerRequest))),
        cpuRatioToBare: round(median(pairs.map((pair) => pair.bare.cpuMicrosPerRequest / pair.result.cpuMicrosPerRequest)), 3),
        notOk: pairs.reduce((sum, pair) => sum + pair.result.notOk + pair.uncached.notOk, 0),
        floors: {
          public: floorSummary(pairs.map((pair) => ({ floor: pair.publicFloor, bare: pair.bare }))),
          subscriber: floorSummary(pairs.map((pair) => ({ floor: pair.subscriberFloor, bare: pair.bare }))),
        },
        withoutReadCache: floorSummary(pairs.map((pair) => ({ floor: pair.uncached, bare: pair.bare }))),
        errors: pairs.reduce((sum, pair) => sum + pair.result.errors + pair.uncached.errors, 0),
        rounds: pairs.map((pair) => ({
          requestsPerSecond: Math.round(pair.result.requestsPerSecond),
          bareRequestsPerSecond: Math.round(pair.bare.requestsPerSecond),
          ratioToBare: round(pair.result.requestsPerSecond / pair.bare.requestsPerSecond, 3),
          cpuRatioToBare: round(pair.bare.cpuMicrosPerRequest / pair.result.cpuMicrosPerRequest, 3),
        })),
      });
    }
    return { seedSeconds, measurements };
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 500));
    await bare.close();
    await app.close();
    await uncachedApp.close();
    await container.close();
    if (schema) await withPostgres((client) => client.query(`drop schema if exists ${schema} cascade`));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- herald processes for the latency and sockets parts -------------------------------------------------------

interface Deployment {
  /** The process clients talk to (HTTP and sockets). */
  apiUrl: string;
  apiPid: number;
  encryptionKey: string;
  close(): Promise<void>;
}

/**
 * The herald processes run what `npm start` runs: the compiled build (dist/server), built here when the sources
 * changed since the last build; `--from-source` runs the sources through tsx instead (bin/herald.js).
 */
async function prepareServerCode(options: Options): Promise<'compiled' | 'source'> {
  if (options.fromSource) return 'source';
  if (await buildServer({ ifStale: true, quiet: true })) log('server built into dist/server');
  return 'compiled';
}

async function startDeployment(mode: Mode, code: 'compiled' | 'source'): Promise<Deployment> {
  const encryptionKey = randomBytes(32).toString('hex');
  const common = {
    HERALD_ENCRYPTION_KEY: encryptionKey,
    HERALD_BOOTSTRAP_SECRET_KEY: SECRET,
    HERALD_RATE_LIMIT: 'false',
    LOG_LEVEL: 'warn',
    HERALD_QUEUE_POLL_MS: '20',
    HERALD_FROM_SOURCE: code === 'source' ? '1' : '',
  };
  if (mode === 'embedded') {
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-inbox-'));
    const herald: HeraldProcess = await startHerald({ ...common, HERALD_DATA_DIR: dataDir }, ['start']);
    return {
      apiUrl: herald.url,
      apiPid: herald.child.pid!,
      encryptionKey,
      async close() {
        await herald.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const processes: ScaleoutProcesses = await startScaleoutProcesses({ apis: 1, workers: 1, env: { ...common, HERALD_BOOTSTRAP_SECRET_KEY: SECRET } });
  return { apiUrl: processes.apis[0]!.url, apiPid: processes.apis[0]!.child.pid!, encryptionKey: processes.env.HERALD_ENCRYPTION_KEY!, close: () => processes.close() };
}

async function api(deployment: Deployment, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(deployment.apiUrl + path, {
    method,
    headers: { authorization: `ApiKey ${SECRET}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

function tokenDeps(deployment: Deployment) {
  return { clock: systemClock, sessionSecret: new SecretBox(parseMasterKey(deployment.encryptionKey)).sessionSecret, config: loadConfig({}) };
}

// ---- latency: trigger → notification_received ---------------------------------------------------------------

interface LatencyResult {
  samples: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  /** The trigger's own HTTP round trip (201 received), part of the figures above: the machine's noise shows here too. */
  triggerResponse: { p50: number; p99: number };
  /** Trigger → the `unread_count_changed` that counts its message (the bell's update), from the same start. */
  counts: { p50: number; p90: number; p99: number; max: number };
}

async function runLatencyPart(options: Options, code: 'compiled' | 'source'): Promise<LatencyResult> {
  const deployment = await startDeployment(options.mode, code);
  try {
    await api(deployment, 'POST', '/v2/workflows', {
      workflowId: WORKFLOW,
      name: 'Bench inbox',
      active: true,
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: 'Report', body: 'Report {{ payload.n }} is ready', redirect: { url: 'https://example.com/{{ payload.n }}' } } }],
    });
    await api(deployment, 'POST', '/v2/subscribers', { subscriberId: 'bench-latency', firstName: 'Ada' });
    const environment = (await api(deployment, 'GET', '/v1/environments/me')).data;
    const subscriber = (await api(deployment, 'GET', '/v2/subscribers/bench-latency')).data;
    const token = await createSubscriberToken(tokenDeps(deployment), {
      environmentId: environment._id,
      organizationId: environment._organizationId,
      subscriberRecordId: subscriber._id,
      subscriberId: 'bench-latency',
    });
    const socket = socketIo(deployment.apiUrl, { transports: ['websocket'], query: { token }, reconnection: false, forceNew: true });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    const waiting = new Map<string, (at: number) => void>();
    socket.on('notification_received', ({ message }: { message: { transactionId: string } }) => waiting.get(message.transactionId)?.(performance.now()));
    // The subscriber starts with no message and every trigger adds one unread: the n-th trigger's counts say n.
    let triggered = 0;
    let countsWaiter: { total: number; resolve: (at: number) => void } | undefined;
    socket.on('unread_count_changed', ({ counts }: { counts: { total: number } }) => {
      if (countsWaiter && counts.total >= countsWaiter.total) countsWaiter.resolve(performance.now());
    });

    const responses: number[] = [];
    const countLatencies: number[] = [];
    const once = async (n: number): Promise<number> => {
      const transactionId = `bench-${randomUUID()}`;
      const arrived = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no notification_received for ${transactionId} in 30 s`)), 30_000);
        waiting.set(transactionId, (at) => {
          clearTimeout(timer);
          resolve(at);
        });
      });
      const counted = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no unread_count_changed counting ${transactionId} in 30 s`)), 30_000);
        countsWaiter = {
          total: ++triggered,
          resolve: (at) => {
            clearTimeout(timer);
            countsWaiter = undefined;
            resolve(at);
          },
        };
      });
      const startedAt = performance.now();
      await api(deployment, 'POST', '/v1/events/trigger', { name: WORKFLOW, to: 'bench-latency', payload: { n }, transactionId });
      responses.push(performance.now() - startedAt);
      const at = await arrived;
      waiting.delete(transactionId);
      countLatencies.push((await counted) - startedAt);
      return at - startedAt;
    };
    for (let n = 0; n < 20; n++) await once(n);
    responses.length = 0;
    countLatencies.length = 0;
    const latencies: number[] = [];
    for (let n = 0; n < options.samples; n++) {
      latencies.push(await once(n));
      // Unsaturated: one trigger in flight, and a pause so the server is idle when the next one comes.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    socket.close();
    latencies.sort((a, b) => a - b);
    responses.sort((a, b) => a - b);
    countLatencies.sort((a, b) => a - b);
    const result = {
      samples: latencies.length,
      p50: round(percentile(latencies, 50), 2),
      p90: round(percentile(latencies, 90), 2),
      p99: round(percentile(latencies, 99), 2),
      max: round(latencies[latencies.length - 1]!, 2),
      mean: round(latencies.reduce((sum, value) => sum + value, 0) / latencies.length, 2),
      triggerResponse: { p50: round(percentile(responses, 50), 2), p99: round(percentile(responses, 99), 2) },
      counts: {
        p50: round(percentile(countLatencies, 50), 2),
        p90: round(percentile(countLatencies, 90), 2),
        p99: round(percentile(countLatencies, 99), 2),
        max: round(countLatencies[countLatencies.length - 1]!, 2),
      },
    };
    log(
      `latency trigger → notification_received over ${result.samples} triggers: p50 ${result.p50} ms, p99 ${result.p99} ms, max ${result.max} ms ` +
        `(the trigger's 201 alone: p50 ${result.triggerResponse.p50} ms, p99 ${result.triggerResponse.p99} ms; load average ${loadavg()[0]!.toFixed(2)}); ` +
        `→ unread_count_changed: p50 ${result.counts.p50} ms, p99 ${result.counts.p99} ms`,
    );
    return result;
  } finally {
    await deployment.close();
  }
}

// ---- sockets: idle connections and the server's RSS ---------------------------------------------------------

interface SocketsResult {
  requested: number;
  connected: number;
  refused: number;
  rssMbAtZero: number;
  rssMbAtEnd: number;
  /** (RSS at the end − RSS with no socket) per 1,000 sockets. */
  rssMbPer1000: number;
  steps: Array<{ sockets: number; rssMb: number }>;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return round(kb / 1024, 1);
}

/**
 * A bare socket.io client over `ws` (a few KB each, where socket.io-client costs far more), speaking what the clients
 * speak: Engine.IO v4 over WebSocket, CONNECT to the default namespace, pong to every ping.
 */
function openIdleSocket(url: string, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket&token=${encodeURIComponent(token)}`);
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('socket not connected in 30 s'));
    }, 30_000);
    ws.on('message', (raw) => {
      const frame = raw.toString();
      if (frame.startsWith('0')) ws.send('40');
      else if (frame === '2') ws.send('3');
      else if (frame.startsWith('40')) {
        clearTimeout(timer);
        resolve(ws);
      } else if (frame.startsWith('44')) {
        clearTimeout(timer);
        ws.close();
        reject(new Error(`refused: ${frame}`));
      }
    });
    ws.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

async function runSocketsPart(options: Options, code: 'compiled' | 'source'): Promise<SocketsResult> {
  const deployment = await startDeployment(options.mode, code);
  const open: WebSocket[] = [];
  try {
    const environment = (await api(deployment, 'GET', '/v1/environments/me')).data;
    const deps = tokenDeps(deployment);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const rssMbAtZero = rssMb(deployment.apiPid);
    const steps: SocketsResult['steps'] = [{ sockets: 0, rssMb: rssMbAtZero }];
    log(`sockets: server RSS ${rssMbAtZero} MB with none`);
    let refused = 0;
    const stepSize = 1000;
    for (let target = Math.min(stepSize, options.sockets); open.length < options.sockets; target = Math.min(target + stepSize, options.sockets)) {
      while (open.length + refused < target) {
        const batch = Math.min(100, target - open.length - refused);
        // Each socket is its own subscriber (its own room), as 10,000 users with the Inbox open would be. The
        // subscribers exist: a token is refused once its subscriber is gone (or was never there).
        const created = await Promise.all(Array.from({ length: batch }, () => api(deployment, 'POST', '/v1/subscribers', { subscriberId: `idle-${randomUUID()}` })));
        const tokens = await Promise.all(
          created.map(({ data }) =>
            createSubscriberToken(deps, { environmentId: environment._id, organizationId: environment._organizationId, subscriberRecordId: data._id, subscriberId: data.subscriberId }),
          ),
        );
        const results = await Promise.allSettled(tokens.map((token) => openIdleSocket(deployment.apiUrl, token)));
        for (const result of results) {
          if (result.status === 'fulfilled') open.push(result.value);
          else refused++;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const rss = rssMb(deployment.apiPid);
      steps.push({ sockets: open.length, rssMb: rss });
      log(`sockets: ${open.length} open (${refused} refused), server RSS ${rss} MB`);
      if (refused > 0 && open.length + refused >= options.sockets) break;
    }
    // Idle for longer than one ping interval (25 s): the sockets are kept alive, not just opened.
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    const alive = open.filter((ws) => ws.readyState === WebSocket.OPEN).length;
    const rssMbAtEnd = rssMb(deployment.apiPid);
    steps.push({ sockets: alive, rssMb: rssMbAtEnd });
    log(`sockets: ${alive} still open after 30 s idle, server RSS ${rssMbAtEnd} MB`);
    return {
      requested: options.sockets,
      connected: alive,
      refused,
      rssMbAtZero,
      rssMbAtEnd,
      rssMbPer1000: round(((rssMbAtEnd - rssMbAtZero) / Math.max(1, alive)) * 1000, 1),
      steps,
    };
  } finally {
    for (const ws of open) ws.terminate();
    await deployment.close();
  }
}

// ---- main -------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  log(`mode ${options.mode}, parts ${options.parts.join(', ')}; load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    mode: options.mode,
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version, loadAverage1mAtStart: round(loadavg()[0]!, 2) },
    settings: options,
  };
  const lines: string[] = [];
  // The latency and sockets parts talk to herald processes (the http part runs the app in this process).
  const processParts = options.parts.includes('latency') || options.parts.includes('sockets');
  const serverCode = processParts ? await prepareServerCode(options) : 'source';
  if (processParts) results.heraldProcesses = serverCode === 'compiled' ? 'compiled build (dist/server)' : 'sources through tsx';
  if (options.parts.includes('http')) {
    const http = await runHttpPart(options);
    results.http = http;
    lines.push(
      `| endpoint | bytes | req/s | bare same bytes req/s | ratio (goal ≥ 0.40) | server CPU µs/request (bare) | CPU ratio | p50 / p99 ms | ` +
        `floor: Herald public route, same bytes (ratio, CPU µs) | floor: Herald + subscriber token, same bytes (ratio, CPU µs) | ` +
        `without the read cache (ratio, CPU µs) |`,
      `|---|---|---|---|---|---|---|---|---|---|---|`,
    );
    for (const m of http.measurements) {
      lines.push(
        `| ${m.name} | ${m.responseBytes} | ${m.requestsPerSecond} | ${m.bareRequestsPerSecond} | ${m.ratioToBare.toFixed(2)} | ` +
          `${m.cpuMicrosPerRequest} (${m.bareCpuMicrosPerRequest}) | ${m.cpuRatioToBare.toFixed(2)} | ${m.p50} / ${m.p99} | ` +
          `${m.floors.public.ratioToBare.toFixed(2)}, ${m.floors.public.cpuMicrosPerRequest} | ${m.floors.subscriber.ratioToBare.toFixed(2)}, ${m.floors.subscriber.cpuMicrosPerRequest} | ` +
          `${m.withoutReadCache.ratioToBare.toFixed(2)}, ${m.withoutReadCache.cpuMicrosPerRequest} |`,
      );
    }
  }
  if (options.parts.includes('latency')) {
    const latency = await runLatencyPart(options, serverCode);
    results.latency = latency;
    lines.push(
      '',
      `trigger → notification_received (${latency.samples} triggers, one at a time): p50 ${latency.p50} ms, p90 ${latency.p90} ms, p99 ${latency.p99} ms, max ${latency.max} ms; ` +
        `of which the trigger's own 201: p50 ${latency.triggerResponse.p50} ms, p99 ${latency.triggerResponse.p99} ms; ` +
        `trigger → unread_count_changed: p50 ${latency.counts.p50} ms, p90 ${latency.counts.p90} ms, p99 ${latency.counts.p99} ms, max ${latency.counts.max} ms`,
    );
  }
  if (options.parts.includes('sockets')) {
    const sockets = await runSocketsPart(options, serverCode);
    results.sockets = sockets;
    lines.push(
      '',
      `idle sockets: ${sockets.connected} of ${sockets.requested} held (${sockets.refused} refused); server RSS ${sockets.rssMbAtZero} MB with none, ` +
        `${sockets.rssMbAtEnd} MB with them: ${sockets.rssMbPer1000} MB per 1,000 sockets`,
    );
  }
  results.loadAverage1mAtEnd = round(loadavg()[0]!, 2);
  const output = options.output ?? join(here, 'results', `inbox-${options.mode}.json`);
  mkdirSync(dirname(output), { recursive: true });
  writeFileSync(output, JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(`\n${lines.join('\n')}\n\nwritten to ${output}\n`);
}

// Awaited: were main() left pending with nothing to keep the process alive (a teardown waiting on an unref'd
// thread), Node would end it with status 13 and a warning instead of 0 and silence.
await main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
