import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import { startTestServer, type TestServer } from '../test/helpers/test-server.js';
import type { DomainEvent } from '../src/domain/webhooks.js';

/**
 * `npm run bench:webhooks [-- --mode embedded|scaleout|both]`: outbound webhook throughput.
 * 1. Delivery: BENCH_WEBHOOK_EVENTS events recorded in the outbox, timed until a local receiver (node:http, 204) has
 *    them all: webhook events delivered per second (relay + signing + POST + attempt log).
 * 2. The cost of recording an event in an environment without endpoints (nothing is written): ns per call.
 * 3. Side by side in one run: in-app triggers under load for BENCH_DURATION_MS with no endpoint, then with an endpoint
 *    taking every event (each trigger then sends message.sent and message.delivered): triggers accepted per second,
 *    in-app messages delivered per second, and webhooks received per second.
 * The scale-out mode is the same single process over PostgreSQL and BullMQ (as `npm run bench --mode scaleout`).
 */
const here = dirname(fileURLToPath(import.meta.url));
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 3000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

function argValue(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

async function startReceiver() {
  let count = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      count++;
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function runLoad(url: string, headers: Record<string, string>, template: unknown, prefix: string): Promise<{ statuses: Record<string, number>; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(here, 'load-worker.mjs'), {
      workerData: { url, method: 'POST', headers, bodies: { template }, prefix, concurrency: CONCURRENCY, durationMs: DURATION_MS },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

async function until(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not done after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function messageCount(server: TestServer): Promise<number> {
  const row = await server.container.db.selectFrom('messages').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow();
  return Number(row.count);
}

async function triggerRound(server: TestServer, label: string, webhooks?: { count: () => number }) {
  const messagesBefore = await messageCount(server);
  const webhooksBefore = webhooks?.count() ?? 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const load = await runLoad(
    `${server.url}/v1/events/trigger`,
    { authorization: `ApiKey ${server.devKey}`, 'content-type': 'application/json' },
    { name: 'bench', to: 'bench-subscriber', payload: { n: '__N__' } },
    label,
  );
  const accepted = load.statuses['201'] ?? 0;
  await until(async () => (await messageCount(server)) - messagesBefore >= accepted, 300_000);
  const deliveredMs = performance.now() - started;
  let webhooksMs: number | undefined;
  if (webhooks) {
    // Each trigger announces message.sent and message.delivered.
    await until(() => webhooks.count() - webhooksBefore >= accepted * 2, 300_000);
    webhooksMs = performance.now() - started;
  }
  const cpu = process.cpuUsage(cpuBefore);
  return {
    cpuPerTriggerUs: Math.round((cpu.user + cpu.system) / Math.max(1, accepted)),
    triggersPerSecond: Math.round((accepted * 1000) / load.elapsedMs),
    deliveredPerSecond: Math.round((accepted * 1000) / deliveredMs),
    webhooksPerSecond: webhooks && webhooksMs ? Math.round(((webhooks.count() - webhooksBefore) * 1000) / webhooksMs) : undefined,
    accepted,
    otherStatuses: Object.fromEntries(Object.entries(load.statuses).filter(([status]) => status !== '201')),
  };
}

async function benchMode(mode: 'embedded' | 'scaleout') {
  process.env.HERALD_TEST_MODE = mode;
  const receiver = await startReceiver();
  const server = await startTestServer({
    worker: true,
    env: { HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_RATE_LIMIT: 'false', HERALD_WEBHOOK_PRESENCE_CACHE_MS: '1000' },
  });
  try {
    const ok = (response: { status: number; text: string }, status: number) => {
      if (response.status !== status) throw new Error(`${response.status}: ${response.text}`);
    };
    ok(await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', identifier: 'bench-inbox', active: true } }), 201);
    ok(await server.request('POST', '/v1/subscribers', { body: { subscriberId: 'bench-subscriber' } }), 201);
    ok(await server.request('POST', '/v2/workflows', { body: { workflowId: 'bench', name: 'bench', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'n {{ payload.n }}' } }] } }), 201);

    // 1. Delivery rate of recorded events.
    const created = await server.request('POST', '/v2/webhooks/endpoints', { body: { url: `${receiver.url}/only-opened`, eventTypes: ['message.opened'] } });
    ok(created, 201);
    const event: DomainEvent = { type: 'message.opened', object: 'message', data: { object: { _id: 'bench', channel: 'email', status: 'sent' } } };
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    for (let done = 0; done < EVENTS; done += 500) {
      const batch = Array.from({ length: Math.min(500, EVENTS - done) }, () => event);
      await server.deps.store.transaction((tx) => tx.events.record(server.devEnvironmentId, batch).then(() => undefined));
    }
    await until(() => receiver.count() >= EVENTS, 300_000);
    const deliveryPerSecond = Math.round((EVENTS * 1000) / (performance.now() - started));
    // CPU of the whole process (Herald and the receiver) per event: robust to a busy machine, unlike the rate.
    const cpu = process.cpuUsage(cpuBefore);
    const cpuPerEventUs = Math.round((cpu.user + cpu.system) / EVENTS);
    ok(await server.request('DELETE', `/v2/webhooks/endpoints/${created.body.data._id}`), 200);
    await server.waitForIdle({ timeoutMs: 60_000 });

    // 2. What a change pays for the outbox when its environment has no endpoint (the cached "not wanted" answer).
    const rounds = 200_000;
    const noEndpoint = server.prodEnvironmentId;
    await server.deps.store.events.wanted(noEndpoint);
    const costStarted = performance.now();
    for (let i = 0; i < rounds; i++) await server.deps.store.events.record(noEndpoint, [event]);
    const noEndpointNs = Math.round(((performance.now() - costStarted) * 1e6) / rounds);

    // 3. Triggers without, then with, webhooks flowing.
    const without = await triggerRound(server, 'without');
    await server.waitForIdle({ timeoutMs: 60_000 });
    ok(await server.request('POST', '/v2/webhooks/endpoints', { body: { url: `${receiver.url}/all` } }), 201);
    const withWebhooks = await triggerRound(server, 'with', receiver);
    return { mode, deliveryPerSecond, cpuPerEventUs, events: EVENTS, noEndpointNs, without, withWebhooks };
  } finally {
    await server.close();
    await receiver.close();
  }
}

const requested = argValue('--mode') ?? 'both';
const modes: Array<'embedded' | 'scaleout'> = requested === 'both' ? ['embedded', 'scaleout'] : [requested as 'embedded' | 'scaleout'];
for (const mode of modes) {
  const result = await benchMode(mode);
  const drop = (a: number, b: number) => `${(((a - b) / a) * 100).toFixed(1)} %`;
  console.log(`\n${mode}: ${result.events} recorded events delivered at ${result.deliveryPerSecond}/s, ${result.cpuPerEventUs} µs of process CPU per event`);
  console.log(`recording a change's event with no endpoint in the environment: ${result.noEndpointNs} ns (nothing written)`);
  console.table({
    'no endpoint': { 'triggers/s': result.without.triggersPerSecond, 'in-app delivered/s': result.without.deliveredPerSecond, 'webhooks/s': '-', 'CPU µs/trigger': result.without.cpuPerTriggerUs },
    'endpoint taking all events': {
      'triggers/s': result.withWebhooks.triggersPerSecond,
      'in-app delivered/s': result.withWebhooks.deliveredPerSecond,
      'webhooks/s': result.withWebhooks.webhooksPerSecond,
      'CPU µs/trigger': result.withWebhooks.cpuPerTriggerUs,
    },
    'lower by': {
      'triggers/s': drop(result.without.triggersPerSecond, result.withWebhooks.triggersPerSecond),
      'in-app delivered/s': drop(result.without.deliveredPerSecond, result.withWebhooks.deliveredPerSecond),
      'webhooks/s': '',
      'CPU µs/trigger': '',
    },
  });
  if (Object.keys(result.without.otherStatuses).length || Object.keys(result.withWebhooks.otherStatuses).length) {
    console.log('non-201 answers:', result.without.otherStatuses, result.withWebhooks.otherStatuses);
  }
}
process.exit(0);
