import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { createWorkflow } from '../worker/engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv, triggerAndSettle } from '../worker/delivery/delivery-helpers.js';

/**
 * GET /v1/dashboard/overview (issue #25) over real deliveries by the worker (embedded, or scaled out with
 * HERALD_TEST_MODE=scaleout): the counts are kept at write time (migration 0024) and the answer adds them up.
 * In-app steps deliver; email steps fail against a local fake answering 500; a workflow with an email step and no
 * email integration is skipped... in the production environment only, to show environments apart.
 */
let server: TestServer;
let fake: HttpFake;

async function overview(query = 'range=24h', key?: string) {
  const response = await server.request('GET', `/v1/dashboard/overview?${query}`, { key });
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

beforeAll(async () => {
  fake = await startHttpFake(() => ({ status: 500, body: { error: 'down' } }));
  server = await startTestServer({ worker: true, env: deliveryEnv() });
  await createSubscriber(server, { subscriberId: 'ovi', firstName: 'Ovi', email: 'ovi@example.com' });
  await createIntegration(server, { providerId: 'novu', channel: 'in_app' });
  await createIntegration(server, { providerId: 'email-webhook', channel: 'email', credentials: { webhookUrl: `${fake.url}/mail`, secretKey: 'signing-secret' } });
  await createWorkflow(server, {
    workflowId: 'welcome',
    name: 'Welcome',
    steps: [
      { name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{ subscriber.firstName }}' } },
      { name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: '<p>Hi</p>' } },
    ],
  });
  await createWorkflow(server, { workflowId: 'news', name: 'News', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'News' } }] });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await fake?.close();
});

describe('GET /v1/dashboard/overview', () => {
  it('is empty before anything was delivered, with every hour of the range present', async () => {
    const data = await overview();
    expect(data.outcomes).toEqual({ sent: 0, failed: 0, skipped: 0, delivered: 0, bounced: 0 });
    expect(data.range.bucket).toBe('hour');
    expect(data.series).toHaveLength(24);
    expect(data.latency).toEqual({ count: 0, byChannel: [] });
    expect(data.inApp).toEqual({ sent: 0, read: 0, seen: 0 });
  });

  it('counts each ended channel step once: sent, failed by provider and workflow, top workflows, latency', async () => {
    for (let i = 0; i < 3; i++) {
      const delivery = await triggerAndSettle(server, { name: 'welcome', to: 'ovi', payload: {} }, 20_000);
      expect(delivery.event.jobs.map((job: any) => job.status)).toEqual(['completed', 'failed']);
    }
    for (let i = 0; i < 2; i++) await triggerAndSettle(server, { name: 'news', to: 'ovi', payload: {} }, 20_000);
    // A trigger repeated with its transactionId is deduplicated: nothing more to count.
    const repeated = await triggerAndSettle(server, { name: 'news', to: 'ovi', payload: {} }, 20_000);
    expect((await server.request('POST', '/v1/events/trigger', { body: { name: 'news', to: 'ovi', transactionId: repeated.transactionId } })).status).toBe(201);
    await server.waitForIdle({ timeoutMs: 20_000 });

    const data = await overview();
    expect(data.outcomes).toEqual({ sent: 6, failed: 3, skipped: 0, delivered: 0, bounced: 0 });
    expect(sum(data.series.map((point: any) => point.counts.in_app))).toBe(6);
    expect(sum(data.series.map((point: any) => point.counts.email))).toBe(0);
    expect(data.failuresByProvider).toEqual([{ providerId: 'email-webhook', channel: 'email', count: 3 }]);
    const welcome = (await server.request('GET', '/v2/workflows/welcome')).body.data;
    const news = (await server.request('GET', '/v2/workflows/news')).body.data;
    expect(data.failuresByWorkflow).toEqual([{ workflowId: welcome._id, name: 'Welcome', identifier: 'welcome', count: 3 }]);
    expect([...data.topWorkflows].sort((a: any, b: any) => a.name.localeCompare(b.name))).toEqual([
      { workflowId: news._id, name: 'News', identifier: 'news', sent: 3, failed: 0, skipped: 0 },
      { workflowId: welcome._id, name: 'Welcome', identifier: 'welcome', sent: 3, failed: 3, skipped: 0 },
    ]);
    expect(data.latency.count).toBe(6);
    expect(data.latency.p50Ms).toBeGreaterThanOrEqual(0);
    expect(data.latency.p95Ms).toBeGreaterThanOrEqual(data.latency.p50Ms);
    expect(data.latency.byChannel).toEqual([expect.objectContaining({ channel: 'in_app', count: 6 })]);
    expect(data.inApp).toEqual({ sent: 6, read: 0, seen: 0, readRate: 0, seenRate: 0 });

    // The other environment sees none of it, and a dashboard session (Bearer) reads the same as the API key.
    expect((await overview('range=24h', server.prodKey)).outcomes.sent).toBe(0);
    const bearer = await server.request('GET', '/v1/dashboard/overview?range=7d', { bearer: server.devSession });
    expect(bearer.status).toBe(200);
    expect(bearer.body.data.outcomes).toEqual(data.outcomes);
    expect(bearer.body.data.range.bucket).toBe('day');
    // 7 × 24 hours up to the end of this hour: 8 UTC days, or exactly 7 when the range starts at midnight (at 23:xx).
    const startsAtMidnight = (bearer.body.data.range.from as string).endsWith('T00:00:00.000Z');
    expect(bearer.body.data.series).toHaveLength(startsAtMidnight ? 7 : 8);
  });

  it('a job saved again in its final status (a rerun) adds nothing', async () => {
    const before = await overview();
    const events = (await server.request('GET', '/v1/notifications?limit=1')).body.data;
    const [job] = await server.deps.store.jobs.listForNotification(server.devEnvironmentId, events[0]._id);
    const stored = (await server.deps.store.jobs.listForNotification(server.devEnvironmentId, events[0]._id)).find((candidate) => candidate.type === 'in_app')!;
    expect(stored.status).toBe('completed');
    await server.deps.store.jobs.save({ ...stored, updatedAt: new Date().toISOString() });
    await server.deps.store.jobs.save({ ...stored }, { ...stored.executionDetails.at(-1)!, _id: `${job._id.slice(0, 20)}ffff` });
    expect((await overview()).outcomes).toEqual(before.outcomes);
  });

  it('in-app read and seen rates follow marks, unmarks and the Inbox', async () => {
    const messages = (await server.request('GET', '/v1/messages?channel=in_app&limit=10')).body.data;
    expect(messages).toHaveLength(6);
    const ids = messages.map((message: any) => message._id);
    const mark = (messageId: string[], markAs: string) => server.request('POST', '/v1/subscribers/ovi/messages/mark-as', { body: { messageId, markAs } });
    expect((await mark(ids.slice(0, 3), 'read')).status).toBe(201);
    // Marking again changes nothing, so counts nothing.
    expect((await mark(ids.slice(0, 3), 'read')).status).toBe(201);
    expect((await mark(ids.slice(3, 4), 'seen')).status).toBe(201);
    expect((await mark(ids.slice(0, 1), 'unread')).status).toBe(201);
    let data = await overview();
    expect(data.inApp).toEqual({ sent: 6, read: 2, seen: 4, readRate: 2 / 6, seenRate: 4 / 6 });

    // The Inbox's own route (a subscriber session) counts too.
    const identifier = (await server.request('GET', '/v1/environments/me')).body.data.identifier;
    const session = await server.request('POST', '/v1/inbox/session', { key: null, body: { applicationIdentifier: identifier, subscriber: { subscriberId: 'ovi' } } });
    const token = session.body.data.token;
    const read = await server.request('PATCH', `/v1/inbox/notifications/${ids[5]}/read`, { bearer: token });
    expect(read.status, read.text).toBeLessThan(300);
    data = await overview();
    expect(data.inApp.read).toBe(3);
    expect(data.inApp.seen).toBe(5);
  });

  it('a custom range is widened to whole hours; a range without the counts is zero; bad ranges are 400s', async () => {
    const now = Date.now();
    const data = await overview(`range=custom&from=${new Date(now - 90 * 60_000).toISOString()}&to=${new Date(now + 60_000).toISOString()}`);
    expect(Date.parse(data.range.from) % 3_600_000).toBe(0);
    expect(Date.parse(data.range.to) % 3_600_000).toBe(0);
    expect(data.outcomes.sent).toBe(6);
    const past = await overview('range=custom&from=2020-01-01T00:00:00.000Z&to=2020-01-02T00:00:00.000Z');
    expect(past.outcomes.sent).toBe(0);
    expect(past.series).toHaveLength(24);
    for (const [query, message] of [
      ['range=custom', 'from and to are required when range is custom'],
      ['range=custom&from=yesterday&to=2020-01-01T00:00:00Z', 'from must be an ISO 8601 date'],
      ['range=custom&from=2020-01-02T00:00:00Z&to=2020-01-01T00:00:00Z', 'from must be before to'],
      ['range=custom&from=2000-01-01T00:00:00Z&to=2020-01-01T00:00:00Z', 'the range must not exceed 366 days'],
    ]) {
      const response = await server.request('GET', `/v1/dashboard/overview?${query}`);
      expectErrorBody(response.body, 400);
      expect(response.body.message).toEqual([message]);
    }
    const badRange = await server.request('GET', '/v1/dashboard/overview?range=1y');
    expectErrorBody(badRange.body, 400);
    expect((await server.request('GET', '/v1/dashboard/overview', { key: null })).status).toBe(401);
  });

  it('reads the kept counts, not the events: with every event, job and message gone the answer is the same', async () => {
    const before = await overview();
    const db = server.container.db;
    for (const table of ['execution_details', 'messages', 'message_counters', 'jobs', 'notification_topics', 'notifications'] as const) await db.deleteFrom(table).execute();
    expect((await server.request('GET', '/v1/notifications?limit=1')).body.data).toEqual([]);
    const after = await overview();
    expect(after).toEqual(before);
  });

  it('is documented in the OpenAPI document', async () => {
    const document = (await server.request('GET', '/docs/json', { key: null })).body;
    const operation = document.paths['/v1/dashboard/overview'].get;
    expect(operation.summary).toMatch(/overview/i);
    expect(operation.parameters.map((parameter: any) => parameter.name)).toEqual(expect.arrayContaining(['range', 'from', 'to']));
    expect(Object.keys(operation.responses['200'].content['application/json'].schema.properties.data.properties)).toEqual(
      expect.arrayContaining(['series', 'outcomes', 'failuresByProvider', 'failuresByWorkflow', 'topWorkflows', 'inApp', 'latency']),
    );
  });
});
