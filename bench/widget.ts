import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createContainer, type Container } from '../src/container.js';
import { newId } from '../src/domain/ids.js';
import type { Message, Subscriber } from '../src/domain/types.js';
import { buildApp } from '../src/http/app.js';
import { createSubscriberToken } from '../src/usecases/auth/subscriber-tokens.js';
import { bootstrapTenancy } from '../src/usecases/tenancy/bootstrap-tenancy.js';
import { runHttpLoad, type HttpLoadResult } from './lib/http-load.js';
import { median } from './lib/rounds.js';
import { benchMode, positiveInteger, type BenchMode } from './lib/cli-options.js';

/**
 * `npm run bench:widget`: the older widget's read path next to the Inbox's, on the same data and the same subscriber:
 * the first feed page (GET /v1/widgets/notifications/feed?page=0 vs GET /v1/inbox/notifications?limit=10) and the bell
 * (GET /v1/widgets/notifications/unseen?limit=100 vs GET /v1/inbox/notifications/count with the bell's filters).
 * Each pair is measured back to back, in rounds, against Herald as `herald start` serves it (embedded: with the read
 * cache) and against an app without the read cache (every request reads the store). In-process server; the load
 * comes from a worker thread.
 *
 *   node --import tsx bench/widget.ts [--mode embedded|scaleout] [--messages 20000] [--subscribers 2000]
 *     [--rounds 3] [--duration 3] [--connections 10]
 */
const SECRET = 'sk_bench_widget_0123456789abcdef0123456789abcdef';
const POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379/0';

interface Options {
  mode: BenchMode;
  messages: number;
  subscribers: number;
  rounds: number;
  duration: number;
  connections: number;
}

const options = new Command()
  .option('--mode <mode>', 'embedded or scaleout', benchMode, 'embedded' as BenchMode)
  .option('--messages <n>', 'in-app messages to seed', positiveInteger, 20_000)
  .option('--subscribers <n>', 'subscribers they are spread over', positiveInteger, 2_000)
  .option('--rounds <n>', 'rounds of each pair', positiveInteger, 3)
  .option('--duration <seconds>', 'seconds of load per measurement', positiveInteger, 3)
  .option('--connections <n>', 'concurrent keep-alive connections', positiveInteger, 10)
  .parse()
  .opts<Options>();

const log = (text: string) => console.error(`[bench:widget] ${text}`);
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function seedMessage(scope: { environmentId: string; organizationId: string }, subscriber: Subscriber, index: number, createdMs: number): Message {
  const createdAt = new Date(createdMs).toISOString();
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
    templateIdentifier: 'bench-widget',
    createdAt,
    updatedAt: createdAt,
    deliveredAt: [createdAt],
    content: `Bench message ${index}: your weekly report is ready to read`,
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
    ...({ severity: 'none', tags: ['reports'] } as Partial<Message>),
  };
}

async function withPostgres<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const suffix = randomBytes(5).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-widget-'));
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
  // As `herald start` serves it (embedded: the read cache rides on the in-process fan-out), and without any cache.
  const app = await buildApp(deps, { realtime: container.realtime });
  const uncachedApp = await buildApp(deps);
  try {
    await bootstrapTenancy(deps, { bootstrapSecretKey: SECRET });
    const environment = (await deps.store.tenancy.findEnvironmentByName('development'))!;
    const scope = { environmentId: environment._id, organizationId: environment._organizationId };
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
        channels: [],
        topics: [],
        __v: 0,
        deleted: false,
        createdAt: at,
        updatedAt: at,
      } as Subscriber;
      await deps.store.subscribers.create(subscriber);
      subscribers.push(subscriber);
    }
    for (let start = 0; start < options.messages; start += 1000) {
      const messages: Message[] = [];
      for (let index = start; index < Math.min(options.messages, start + 1000); index++) {
        messages.push(seedMessage(scope, subscribers[index % subscribers.length]!, index, originMs + index * 1000));
      }
      await deps.store.transaction((store) => store.messages.createMany(messages));
    }
    if (schema) await withPostgres((client) => client.query(`vacuum analyze ${schema}.messages, ${schema}.subscribers`));
    log(`seeded ${options.subscribers} subscribers, ${options.messages} in-app messages (${options.mode})`);

    const probe = subscribers[0]!;
    const token = await createSubscriberToken(deps, { ...scope, subscriberRecordId: probe._id, subscriberId: probe.subscriberId });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const bell = encodeURIComponent(JSON.stringify(['high', 'medium', 'low', 'none'].map((severity) => ({ read: false, archived: false, snoozed: false, severity }))));
    const pairs = [
      { name: 'first page', inbox: '/v1/inbox/notifications?limit=10&archived=false&snoozed=false', widget: '/v1/widgets/notifications/feed?page=0' },
      { name: 'bell count', inbox: `/v1/inbox/notifications/count?filters=${bell}`, widget: '/v1/widgets/notifications/unseen?limit=100' },
    ];
    const servers = [
      { name: options.mode === 'embedded' ? 'as served (read cache)' : 'as served (no read cache in scale-out)', url: await app.listen({ host: '127.0.0.1', port: 0 }) },
      ...(options.mode === 'embedded' ? [{ name: 'without the read cache', url: await uncachedApp.listen({ host: '127.0.0.1', port: 0 }) }] : []),
    ];
    const results: Array<Record<string, unknown>> = [];
    for (const server of servers) {
      for (const pair of pairs) {
        for (const path of [pair.inbox, pair.widget]) {
          const response = await fetch(server.url + path, { headers });
          if (response.status !== 200) throw new Error(`${path}: ${response.status} ${(await response.text()).slice(0, 300)}`);
        }
        const inboxRuns: HttpLoadResult[] = [];
        const widgetRuns: HttpLoadResult[] = [];
        for (let round = 0; round < options.rounds; round++) {
          const load = (path: string) => runHttpLoad({ url: server.url + path, headers, connections: options.connections, durationSeconds: options.duration });
          inboxRuns.push(await load(pair.inbox));
          widgetRuns.push(await load(pair.widget));
        }
        const failures = [...inboxRuns, ...widgetRuns].reduce((sum, run) => sum + run.notOk + run.errors, 0);
        if (failures > 0) throw new Error(`${pair.name}: ${failures} failed requests`);
        const ratios = inboxRuns.map((run, index) => widgetRuns[index]!.requestsPerSecond / run.requestsPerSecond);
        results.push({
          server: server.name,
          pair: pair.name,
          inboxRequestsPerSecond: Math.round(median(inboxRuns.map((run) => run.requestsPerSecond))),
          widgetRequestsPerSecond: Math.round(median(widgetRuns.map((run) => run.requestsPerSecond))),
          widgetToInbox: round(median(ratios)),
          inboxP99Ms: round(median(inboxRuns.map((run) => run.latencyMs.p99))),
          widgetP99Ms: round(median(widgetRuns.map((run) => run.latencyMs.p99))),
        });
        log(JSON.stringify(results.at(-1)));
      }
    }
    console.log(JSON.stringify({ mode: options.mode, messages: options.messages, subscribers: options.subscribers, connections: options.connections, durationSeconds: options.duration, rounds: options.rounds, results }, null, 2));
  } finally {
    await app.close();
    await uncachedApp.close();
    await container.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (schema) await withPostgres((client) => client.query(`drop schema ${schema} cascade`));
  }
}

await main();
