import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { scrape, type Scrape } from '../helpers/metrics-scrape.js';
import { createWorkflow, trigger } from '../worker/engine-helpers.js';
import { createIntegration, deliveryEnv } from '../worker/delivery/delivery-helpers.js';
import { heraldCaller, mintSubscriberToken, openInboxSocket } from '../realtime/inbox-socket-helpers.js';

/**
 * `GET /metrics` scraped over real HTTP while workflows run, in the mode HERALD_TEST_MODE selects (embedded: SQLite
 * and the SQL queue; scaleout: PostgreSQL and BullMQ): counters move by exactly what was done, label sets stay fixed
 * however many subscribers there are, the queue gauges describe the queue, and the token guards the route.
 */
let server: TestServer;
let vendor: HttpFake;
let refusingVendor: HttpFake;

beforeAll(async () => {
  vendor = await startHttpFake(() => ({ status: 202, body: '' }));
  refusingVendor = await startHttpFake(() => ({ status: 400, body: { errors: [{ message: 'bad from address' }] } }));
  server = await startTestServer({ worker: true, env: deliveryEnv() });
  await createIntegration(server, { providerId: 'sendgrid', identifier: 'sg-ok', credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: vendor.url } });
  await createIntegration(server, { providerId: 'sendgrid', identifier: 'sg-refusing', credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: refusingVendor.url } });
  await createWorkflow(server, {
    workflowId: 'obs-both',
    steps: [
      { name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{ subscriber.firstName }}' } },
      { name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: '<p>Hello {{ subscriber.firstName }}</p>' } },
    ],
  });
  await createWorkflow(server, {
    workflowId: 'obs-later',
    steps: [
      { name: 'wait', type: 'delay', controlValues: { type: 'regular', amount: 1, unit: 'hours' } },
      { name: 'inbox', type: 'in_app', controlValues: { body: 'Later' } },
    ],
  });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await vendor?.close();
  await refusingVendor?.close();
});

const metricsUrl = () => `${server.url}/metrics`;

async function triggerMany(count: number, prefix: string, extra: Record<string, unknown> = {}): Promise<void> {
  for (let i = 0; i < count; i++) {
    const response = await trigger(server, { name: 'obs-both', to: { subscriberId: `${prefix}-${i}`, firstName: 'Ann', email: `${prefix}-${i}@example.com` }, ...extra });
    expect(response.status, response.text).toBe(201);
  }
  await server.waitForIdle({ timeoutMs: 30_000, ignoreDelayed: true });
}

function delta(before: Scrape, after: Scrape, read: (scrape: Scrape) => number): number {
  return read(after) - read(before);
}

describe('GET /metrics while workflows run', () => {
  it('moves the counters by exactly the triggers, step runs, deliveries and provider calls made', async () => {
    await triggerMany(1, 'warm'); // every series below exists from here on
    const before = await scrape(metricsUrl());
    const N = 6;
    await triggerMany(N, 'count');
    const after = await scrape(metricsUrl());

    expect(delta(before, after, (s) => s.value('herald_triggers_total'))).toBe(N);
    expect(delta(before, after, (s) => s.value('herald_jobs_total', { type: 'process-trigger', status: 'completed' }))).toBe(N);
    expect(delta(before, after, (s) => s.value('herald_jobs_total', { type: 'in_app', status: 'completed' }))).toBe(N);
    expect(delta(before, after, (s) => s.value('herald_jobs_total', { type: 'email', status: 'completed' }))).toBe(N);
    expect(delta(before, after, (s) => s.count('herald_job_duration_seconds', { type: 'email' }))).toBe(N);
    expect(delta(before, after, (s) => s.value('herald_deliveries_total', { channel: 'in_app', provider: 'novu', status: 'sent' }))).toBe(N);
    expect(delta(before, after, (s) => s.value('herald_deliveries_total', { channel: 'email', provider: 'sendgrid', status: 'sent' }))).toBe(N);
    expect(delta(before, after, (s) => s.count('herald_provider_request_duration_seconds', { provider: 'sendgrid' }))).toBe(N);
    expect(vendor.requests.length).toBe(N + 1);
    // The route template, never the URL; each trigger answered 201.
    expect(delta(before, after, (s) => s.count('herald_http_request_duration_seconds', { method: 'POST', route: '/v1/events/trigger', status_code: '201' }))).toBe(N);
    expect(after.family('herald_triggers_total')?.type).toBe('counter');
    expect(after.family('herald_http_request_duration_seconds')?.type).toBe('histogram');
  });

  it('counts a refused provider call as an error delivery and a failed step', async () => {
    const before = await scrape(metricsUrl());
    await triggerMany(2, 'refused', { overrides: { integrationIdentifier: 'sg-refusing' } });
    const after = await scrape(metricsUrl());
    expect(refusingVendor.requests.length).toBe(2);
    expect(delta(before, after, (s) => s.value('herald_deliveries_total', { channel: 'email', provider: 'sendgrid', status: 'error' }))).toBe(2);
    expect(delta(before, after, (s) => s.value('herald_deliveries_total', { channel: 'email', provider: 'sendgrid', status: 'sent' }))).toBe(0);
    expect(delta(before, after, (s) => s.value('herald_jobs_total', { type: 'email', status: 'failed' }))).toBe(2);
    expect(delta(before, after, (s) => s.count('herald_provider_request_duration_seconds', { provider: 'sendgrid' }))).toBe(2);
  });

  it('labels requests by route template: ids and unknown paths never become label values', async () => {
    for (const id of ['aaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbb', 'cccccccccccccccccccccccc']) {
      expect((await server.request('GET', `/v2/subscribers/${id}`)).status).toBe(404);
      expect((await server.request('GET', `/no/such/path/${id}`)).status).toBe(404);
    }
    const after = await scrape(metricsUrl());
    const routes = after.labelSets('herald_http_request_duration_seconds').map((labels) => labels.route!);
    expect(routes.some((route) => /[a-c]{24}/.test(route))).toBe(false);
    expect(after.count('herald_http_request_duration_seconds', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(3);
    expect(after.count('herald_http_request_duration_seconds', { method: 'GET', route: '/v2/subscribers/:subscriberId', status_code: '404' })).toBe(3);
  });

  it('keeps the same series however many subscribers are notified', async () => {
    const before = await scrape(metricsUrl());
    await triggerMany(15, 'many');
    const after = await scrape(metricsUrl());
    expect(delta(before, after, (s) => s.value('herald_triggers_total'))).toBe(15);
    expect(after.heraldSeriesCount()).toBe(before.heraldSeriesCount());
    expect(after.text).not.toMatch(/many-\d/);
  });

  it('reports the queue by state (a delayed step is `delayed`), the database pool and realtime connections', async () => {
    const before = await scrape(metricsUrl());
    const response = await trigger(server, { name: 'obs-later', to: 'warm-0' });
    expect(response.status, response.text).toBe(201);
    await server.waitForIdle({ timeoutMs: 20_000, ignoreDelayed: true });
    const after = await scrape(metricsUrl());
    expect(after.value('herald_queue_jobs', { state: 'delayed' }) - before.value('herald_queue_jobs', { state: 'delayed' })).toBe(1);
    expect(after.value('herald_queue_jobs', { state: 'waiting' })).toBe(0);
    expect(after.value('herald_queue_oldest_waiting_seconds')).toBe(0);
    expect(after.labelSets('herald_queue_jobs').map((labels) => labels.state).sort()).toEqual(['active', 'delayed', 'failed', 'waiting']);
    expect(after.family('herald_queue_jobs')?.type).toBe('gauge');
    expect(after.family('herald_realtime_connections')?.samples[0]?.value).toBe(0);
    expect(after.family('herald_webhook_deliveries_total')?.type).toBe('counter');
    const inUse = after.value('herald_db_pool_in_use');
    if (server.config.databaseUrl) expect(inUse).toBeGreaterThanOrEqual(0);
    else expect(inUse).toBe(1);
    // Default process metrics.
    expect(after.value('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(after.family('nodejs_eventloop_lag_seconds')).toBeDefined();
  });
});

describe('gauges and recorders fed from outside the engine', () => {
  it('counts the open Inbox sockets of this process', async () => {
    const call = heraldCaller(server.url, server.devKey);
    const token = await mintSubscriberToken(call, server.deps, 'warm-0');
    const sockets = [await openInboxSocket(server.url, token), await openInboxSocket(server.url, token)];
    try {
      expect((await scrape(metricsUrl())).value('herald_realtime_connections')).toBe(2);
      sockets.pop()!.close();
      await expect.poll(async () => (await scrape(metricsUrl())).value('herald_realtime_connections')).toBe(1);
    } finally {
      for (const socket of sockets) socket.close();
    }
  });

  it('counts real webhook delivery attempts by outcome: an answering and a refusing receiver', async () => {
    const receiver = await startHttpFake((request) => (request.path === '/refuse' ? { status: 500, body: 'no' } : { status: 204, body: '' }));
    // The endpoints are deleted only after both attempts are counted: a test send is a queued job (scaled out, run by
    // the worker), and an endpoint deleted before its job runs has nothing left to send to.
    const endpointIds: string[] = [];
    try {
      const before = await scrape(metricsUrl());
      for (const path of ['/ok', '/refuse']) {
        const created = await server.request('POST', '/v2/webhooks/endpoints', { body: { url: `${receiver.url}${path}` } });
        expect(created.status, created.text).toBe(201);
        endpointIds.push(created.body.data._id);
        const sent = await server.request('POST', `/v2/webhooks/endpoints/${created.body.data._id}/test`);
        expect(sent.status, sent.text).toBeLessThan(300);
      }
      // Until both are counted, each attempt once: the answering receiver's one success, and as many failures as the
      // refusing receiver got requests (read after the scrape: an attempt is counted once its answer is in). The refused
      // send is retried 5 s later, so on a slow run a second attempt may be in by then; it must be counted too.
      const deadline = Date.now() + 15_000;
      const counted = (after: Awaited<ReturnType<typeof scrape>>, status: string) => delta(before, after, (s) => s.value('herald_webhook_deliveries_total', { status }));
      const refusedRequests = () => receiver.requests.filter((request) => request.path === '/refuse').length;
      let after = await scrape(metricsUrl());
      let refused = refusedRequests();
      while ((counted(after, 'failed') < 1 || counted(after, 'failed') !== refused || counted(after, 'success') < 1) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        after = await scrape(metricsUrl());
        refused = refusedRequests();
      }
      expect(counted(after, 'success')).toBe(1);
      expect(counted(after, 'failed')).toBeGreaterThanOrEqual(1);
      expect(counted(after, 'failed')).toBe(refused);
    } finally {
      for (const id of endpointIds) await server.request('DELETE', `/v2/webhooks/endpoints/${id}`);
      await receiver.close();
    }
  });
});

describe('a queue nobody consumes', () => {
  let idle: TestServer;
  beforeAll(async () => {
    idle = await startTestServer({ env: deliveryEnv({ HERALD_METRICS_TOKEN: 's3cret-token' }) });
    await createWorkflow(idle, { workflowId: 'obs-idle', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'x' } }] });
  }, 60_000);
  afterAll(async () => idle?.close());

  it('shows its waiting jobs and how long the oldest has waited', async () => {
    for (let i = 0; i < 3; i++) expect((await trigger(idle, { name: 'obs-idle', to: `idle-${i}` })).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const scraped = await scrape(`${idle.url}/metrics`, 's3cret-token');
    expect(scraped.value('herald_queue_jobs', { state: 'waiting' })).toBe(3);
    expect(scraped.value('herald_queue_jobs', { state: 'active' })).toBe(0);
    expect(scraped.value('herald_queue_oldest_waiting_seconds')).toBeGreaterThanOrEqual(0.5);
    expect(scraped.value('herald_queue_oldest_waiting_seconds')).toBeLessThan(30);
    expect(scraped.value('herald_triggers_total')).toBe(3);
  });

  it('refuses a scrape without the token, or with another one, when HERALD_METRICS_TOKEN is set', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong' }, { authorization: 's3cret-token' }, { authorization: 'Basic s3cret-token' }]) {
      const response = await fetch(`${idle.url}/metrics`, { headers });
      expect(response.status).toBe(401);
      const body = await response.json();
      expect(body).toMatchObject({ statusCode: 401 });
      expect(JSON.stringify(body)).not.toContain('herald_');
    }
    // Not rate limited, not behind an API key: a scrape with only the token works, many times over.
    for (let i = 0; i < 5; i++) await scrape(`${idle.url}/metrics`, 's3cret-token');
  });
});

describe('scrapes and the rate limits', () => {
  it('are never counted: /metrics answers after the environment is limited', async () => {
    const limited = await startTestServer({ env: { HERALD_RATE_LIMIT_GLOBAL: '1', HERALD_RATE_LIMIT_CONFIGURATION: '1', HERALD_RATE_LIMIT_WINDOW_SECONDS: '3600' } });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await limited.request('GET', '/v1/subscribers?limit=1')).status);
      expect(statuses).toContain(429);
      for (let i = 0; i < 10; i++) await scrape(`${limited.url}/metrics`);
      expect((await scrape(`${limited.url}/metrics`)).count('herald_http_request_duration_seconds', { method: 'GET', route: '/v1/subscribers', status_code: '429' })).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe('HERALD_METRICS=off', () => {
  it('has no /metrics route and still serves the API', async () => {
    const off = await startTestServer({ env: { HERALD_METRICS: 'off' } });
    try {
      // No such route: answered as any unknown path is (the auth layer answers first).
      const response = await fetch(`${off.url}/metrics`);
      expect([401, 404]).toContain(response.status);
      expect(await response.text()).not.toContain('herald_');
      expect((await off.request('GET', '/v1/subscribers?limit=1')).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});
