import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { scaleoutModeRequested } from '../helpers/databases.js';
import type { EncryptedIdempotencyStore } from '../../src/store/encrypted-idempotency-store.js';
import { expectErrorBody } from '../helpers/shape.js';
import { asDashboard, createDashboardUser, signIn, type DashboardSignIn } from '../helpers/dashboard.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

/**
 * The endpoints API (/v2/webhooks): shapes, secrets never shown but by the two routes meant for it, validation 4xx in
 * the conventions' shape, the private-address guard, environment scoping, viewers, and the automatic disabling of an
 * endpoint that only fails.
 */
let server: TestServer;
let receiver: WebhookReceiver;
let admin: DashboardSignIn;
let viewer: DashboardSignIn;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    worker: true,
    env: {
      HERALD_OUTBOUND_ALLOW: '127.0.0.1',
      HERALD_WEBHOOK_RELAY_MS: '20',
      HERALD_QUEUE_POLL_MS: '20',
      HERALD_WEBHOOK_RETRY_SCHEDULE: '0,150ms,150ms,150ms,150ms,150ms',
      HERALD_WEBHOOK_DISABLE_AFTER: '400ms',
    },
  });
  await createDashboardUser(server, { email: 'hooks-admin@example.com', role: 'admin' });
  await createDashboardUser(server, { email: 'hooks-viewer@example.com', role: 'viewer' });
  admin = await signIn(server, 'hooks-admin@example.com');
  viewer = await signIn(server, 'hooks-viewer@example.com');
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const create = (body: Record<string, unknown>, key?: string) => server.request('POST', '/v2/webhooks/endpoints', { body, key });

describe('POST /v2/webhooks/endpoints and reads', () => {
  it('creates with defaults and a whsec_ secret; reads never carry the secret', async () => {
    const response = await create({ url: `${receiver.url}/a`, description: 'orders', eventTypes: ['message.sent', 'message.failed'], headers: { 'X-Token': 't0k3n' } });
    expect(response.status, response.text).toBe(201);
    const data = response.body.data;
    expect(data).toMatchObject({ _id: expect.stringMatching(/^[0-9a-f]{24}$/), url: `${receiver.url}/a`, description: 'orders', eventTypes: ['message.sent', 'message.failed'], enabled: true });
    expect(Buffer.from(data.secret.replace(/^whsec_/, ''), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(data.secret).toMatch(/^whsec_/);
    expect(new Date(data.createdAt).toISOString()).toBe(data.createdAt);

    const list = await server.request('GET', '/v2/webhooks/endpoints');
    expect(list.status).toBe(200);
    const get = await server.request('GET', `/v2/webhooks/endpoints/${data._id}`);
    const patch = await server.request('PATCH', `/v2/webhooks/endpoints/${data._id}`, { body: { description: 'orders v2' } });
    expect(patch.status, patch.text).toBe(200);
    expect(patch.body.data.description).toBe('orders v2');
    for (const text of [list.text, get.text, patch.text]) expect(text).not.toContain(data.secret);
    expect(list.body.data.map((e: any) => e._id)).toContain(data._id);

    const secret = await server.request('GET', `/v2/webhooks/endpoints/${data._id}/secret`);
    expect(secret.body).toEqual({ data: { secret: data.secret } });

    // Stored encrypted: neither the secret nor the header value is in the database in the clear.
    const row = await server.container.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', data._id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(data.secret.slice(6));
    expect(JSON.stringify(row)).not.toContain('t0k3n');
  });

  it('an Idempotency-Key replays the created endpoint with its secret, which is stored encrypted, never in plain text', async () => {
    const body = { url: `${receiver.url}/idempotent`, description: 'idempotent' };
    const first = await server.request('POST', '/v2/webhooks/endpoints', { body, headers: { 'idempotency-key': 'webhook-create-1' } });
    expect(first.status, first.text).toBe(201);
    const again = await server.request('POST', '/v2/webhooks/endpoints', { body, headers: { 'idempotency-key': 'webhook-create-1' } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replay')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
    const listed = await server.request('GET', '/v2/webhooks/endpoints');
    expect(listed.body.data.filter((endpoint: any) => endpoint.description === 'idempotent')).toHaveLength(1);
    const secret = first.body.data.secret as string;
    if (!scaleoutModeRequested()) {
      const row = await server.container.db.selectFrom('idempotency_keys').selectAll().where('key', '=', 'webhook-create-1').executeTakeFirstOrThrow();
      expect(row.response_body).not.toContain(secret);
      expect(row.response_body!.startsWith('enc:v1:')).toBe(true);
    } else {
      // Redis: the key's stored value, read raw through the store's own client.
      const inner = (server.deps.idempotency as EncryptedIdempotencyStore).inner as any;
      const redisKey = inner.keyOf(server.devEnvironmentId, 'webhook-create-1');
      const raw = (await inner.redis.type(redisKey)) === 'hash' ? JSON.stringify(await inner.redis.hgetall(redisKey)) : String(await inner.redis.get(redisKey));
      expect(raw).toContain('enc:v1:');
      expect(raw).not.toContain(secret);
    }
  });

  it('lists the event types', async () => {
    const response = await server.request('GET', '/v2/webhooks/event-types');
    expect(response.status).toBe(200);
    expect(response.body.data.map((t: any) => t.type)).toEqual([...WEBHOOK_EVENT_TYPES]);
    expect(response.body.data.every((t: any) => t.description.length > 0)).toBe(true);
  });

  it('bad input is a 400 in the error shape, and creates nothing', async () => {
    const before = (await server.request('GET', '/v2/webhooks/endpoints')).body.data.length;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ url: 'not a url' }, /url must be an absolute http or https URL/],
      [{ url: 'ftp://example.com/x' }, /url must use http or https/],
      [{ url: `${receiver.url}/x`, eventTypes: ['message.sent', 'message.exploded'] }, /unknown event type "message.exploded"/],
      [{ url: `${receiver.url}/x`, headers: { 'webhook-signature': 'forged' } }, /webhook-signature is set by Herald/],
      [{ url: `${receiver.url}/x`, headers: { 'bad header': 'x' } }, /not a valid header name/],
      [{ description: 'no url' }, /url/],
      [{ url: `${receiver.url}/x`, enabled: 'yes' }, /enabled/],
    ];
    for (const [body, message] of cases) {
      const response = await create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expectErrorBody(response.body, 400, '/v2/webhooks/endpoints');
      expect([response.body.message].flat().join("; ")).toMatch(message);
    }
    expect((await server.request('GET', '/v2/webhooks/endpoints')).body.data.length).toBe(before);
  });

  it('a private, loopback or link-local target not allowed by HERALD_OUTBOUND_ALLOW is refused at create and at update', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://10.1.2.3/hook', 'http://[::1]:8080/hook', 'http://192.168.1.10/hook']) {
      const response = await create({ url });
      expect(response.status, url).toBe(400);
      expect([response.body.message].flat().join("; ")).toMatch(/refused: (link-local|private|loopback) address/);
    }
    const ok = await create({ url: `${receiver.url}/guarded` });
    const patched = await server.request('PATCH', `/v2/webhooks/endpoints/${ok.body.data._id}`, { body: { url: 'http://10.0.0.1/x' } });
    expect(patched.status).toBe(400);
    expect((await server.request('GET', `/v2/webhooks/endpoints/${ok.body.data._id}`)).body.data.url).toBe(`${receiver.url}/guarded`);
  });

  it('another environment sees a 404 for every route of an endpoint, and changes nothing', async () => {
    const mine = (await create({ url: `${receiver.url}/scoped` })).body.data;
    for (const [method, path, body] of [
      ['GET', `/v2/webhooks/endpoints/${mine._id}`, undefined],
      ['PATCH', `/v2/webhooks/endpoints/${mine._id}`, { enabled: false }],
      ['DELETE', `/v2/webhooks/endpoints/${mine._id}`, undefined],
      ['GET', `/v2/webhooks/endpoints/${mine._id}/secret`, undefined],
      ['POST', `/v2/webhooks/endpoints/${mine._id}/rotate-secret`, undefined],
      ['GET', `/v2/webhooks/endpoints/${mine._id}/attempts`, undefined],
      ['POST', `/v2/webhooks/endpoints/${mine._id}/test`, undefined],
      ['POST', `/v2/webhooks/endpoints/${mine._id}/recover`, { since: '2026-01-01T00:00:00.000Z' }],
      ['GET', '/v2/webhooks/endpoints/not-an-id', undefined],
    ] as const) {
      const response = await server.request(method, path, { key: server.prodKey, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.message).toMatch(/Webhook endpoint with id .* not found/);
    }
    expect((await server.request('GET', '/v2/webhooks/endpoints', { key: server.prodKey })).body.data).toEqual([]);
    const still = await server.request('GET', `/v2/webhooks/endpoints/${mine._id}`);
    expect(still.body.data.enabled).toBe(true);
    expect((await server.request('GET', `/v2/webhooks/endpoints/${mine._id}/secret`)).body.data.secret).toBe(mine.secret);
  });

  it('delete: gone from reads; a second delete is a 404', async () => {
    const endpoint = (await create({ url: `${receiver.url}/gone` })).body.data;
    expect((await server.request('DELETE', `/v2/webhooks/endpoints/${endpoint._id}`)).status).toBe(200);
    expect((await server.request('GET', `/v2/webhooks/endpoints/${endpoint._id}`)).status).toBe(404);
    expect((await server.request('DELETE', `/v2/webhooks/endpoints/${endpoint._id}`)).status).toBe(404);
  });

  it('recover checks its since; resend of an unknown attempt is a 404', async () => {
    const endpoint = (await create({ url: `${receiver.url}/r` })).body.data;
    const bad = await server.request('POST', `/v2/webhooks/endpoints/${endpoint._id}/recover`, { body: { since: 'yesterday' } });
    expect(bad.status).toBe(400);
    const future = await server.request('POST', `/v2/webhooks/endpoints/${endpoint._id}/recover`, { body: { since: '2999-01-01T00:00:00.000Z' } });
    expect(future.status).toBe(400);
    expect((await server.request('POST', '/v2/webhooks/attempts/0123456789abcdef01234567/resend')).status).toBe(404);
  });
});

describe('the guard at send time', () => {
  it('an endpoint whose target the guard refuses when sending (an allow entry removed since) is never called, nor retried', async () => {
    // Stored directly, as if created while HERALD_OUTBOUND_ALLOW still named 127.0.0.2 (it only names 127.0.0.1 now).
    const port = new URL(receiver.url).port;
    const now = new Date().toISOString();
    const id = '0123456789abcdef0123abcd';
    await server.deps.store.webhooks.createEndpoint(
      { _id: id, _environmentId: server.devEnvironmentId, url: `http://127.0.0.2:${port}/refused`, description: '', eventTypes: [], enabled: true, headers: {}, createdAt: now, updatedAt: now },
      'whsec_' + Buffer.alloc(32, 7).toString('base64'),
    );
    expect((await server.request('POST', `/v2/webhooks/endpoints/${id}/test`)).status).toBe(201);
    await expect.poll(async () => (await server.request('GET', `/v2/webhooks/endpoints/${id}/attempts?status=failed`)).body.data.length, { timeout: 10_000 }).toBe(1);
    await server.waitForIdle({ timeoutMs: 10_000 });
    const attempts = (await server.request('GET', `/v2/webhooks/endpoints/${id}/attempts`)).body.data;
    expect(attempts).toHaveLength(1);
    expect(attempts[0].error).toMatch(/refused: loopback address/);
    expect(attempts[0].responseStatusCode).toBeUndefined();
    expect(receiver.received.filter((w) => w.path === '/refused')).toHaveLength(0);
  });
});

describe('dashboard callers', () => {
  it('viewers see endpoints (header values hidden) but not secrets, and cannot change anything', async () => {
    const endpoint = (await create({ url: `${receiver.url}/dash`, headers: { 'X-Token': 'hidden-value' } })).body.data;
    const list = await asDashboard(server, viewer, 'GET', '/v2/webhooks/endpoints');
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.find((e: any) => e._id === endpoint._id).headers).toEqual({ 'X-Token': '[hidden]' });
    expect(list.text).not.toContain('hidden-value');
    expect((await asDashboard(server, viewer, 'GET', `/v2/webhooks/endpoints/${endpoint._id}/secret`)).status).toBe(403);
    expect((await asDashboard(server, viewer, 'POST', `/v2/webhooks/endpoints/${endpoint._id}/rotate-secret`)).status).toBe(403);
    expect((await asDashboard(server, viewer, 'POST', '/v2/webhooks/endpoints', { body: { url: `${receiver.url}/v` } })).status).toBe(403);

    const adminList = await asDashboard(server, admin, 'GET', '/v2/webhooks/endpoints');
    expect(adminList.body.data.find((e: any) => e._id === endpoint._id).headers).toEqual({ 'X-Token': 'hidden-value' });
    const secret = await asDashboard(server, admin, 'GET', `/v2/webhooks/endpoints/${endpoint._id}/secret`);
    expect(secret.body.data.secret).toBe(endpoint.secret);
  });
});

describe('an endpoint that only fails', () => {
  it('is disabled after the configured window of nothing but failures, with a reason admins see; enabling clears it', async () => {
    receiver.reply = (request) => (request.path === '/broken' ? { status: 500, body: 'nope' } : { status: 204 });
    try {
      const endpoint = (await create({ url: `${receiver.url}/broken` })).body.data;
      expect((await server.request('POST', `/v2/webhooks/endpoints/${endpoint._id}/test`)).status).toBe(201);
      await expect.poll(async () => (await server.request('GET', `/v2/webhooks/endpoints/${endpoint._id}`)).body.data.enabled, { timeout: 15_000 }).toBe(false);
      const disabled = (await server.request('GET', `/v2/webhooks/endpoints/${endpoint._id}`)).body.data;
      expect(disabled.disabledReason).toMatch(/^Disabled automatically: every delivery attempt failed for .* days \(since /);
      const attempts = (await server.request('GET', `/v2/webhooks/endpoints/${endpoint._id}/attempts`)).body.data;
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      expect(attempts.every((a: any) => a.status === 'failed')).toBe(true);
      await server.waitForIdle({ timeoutMs: 10_000 });
      const sent = receiver.received.filter((w) => w.path === '/broken').length;

      // Disabled: a test event is recorded as not sent.
      expect((await server.request('POST', `/v2/webhooks/endpoints/${endpoint._id}/test`)).status).toBe(201);
      await server.waitForIdle({ timeoutMs: 10_000 });
      expect(receiver.received.filter((w) => w.path === '/broken').length).toBe(sent);
      const latest = (await server.request('GET', `/v2/webhooks/endpoints/${endpoint._id}/attempts?limit=1`)).body.data[0];
      expect(latest).toMatchObject({ status: 'failed', error: 'Endpoint disabled: not sent' });

      receiver.reply = () => ({ status: 204 });
      const enabled = await server.request('PATCH', `/v2/webhooks/endpoints/${endpoint._id}`, { body: { enabled: true } });
      expect(enabled.body.data.enabled).toBe(true);
      expect(enabled.body.data.disabledReason).toBeUndefined();
      expect(enabled.body.data.failingSince).toBeUndefined();
    } finally {
      receiver.reply = () => ({ status: 204 });
    }
  });
});

describe('history retention', () => {
  it('deletes events and finished attempts older than HERALD_WEBHOOK_RETENTION_DAYS, keeping pending ones and undispatched events', async () => {
    const countOf = async (table: 'webhook_events' | 'webhook_attempts', where?: [string, string]) => {
      let query = server.container.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
      if (where) query = query.where(where[0] as never, '=', where[1] as never);
      return Number((await query.executeTakeFirstOrThrow()).n);
    };
    await server.waitForIdle({ timeoutMs: 10_000 });
    expect(await countOf('webhook_attempts')).toBeGreaterThan(0);
    const endpoint = (await create({ url: `${receiver.url}/kept`, enabled: false })).body.data;
    const now = new Date().toISOString();
    // An old pending attempt (no job runs it) and an old event not yet fanned out: both older than any boundary.
    await server.deps.store.webhooks.createAttempts([
      { _id: '000000010000000000000002', _environmentId: server.devEnvironmentId, _endpointId: endpoint._id, webhookId: 'w', eventType: 'webhook.test', attempt: 1, status: 'pending', durationMs: 0, responseBodySnippet: '', dueAt: '2999-01-01T00:00:00.000Z', createdAt: now },
    ]);
    await server.container.db.insertInto('webhook_events').values({ id: '000000010000000000000001', environment_id: 'elsewhere', type: 'webhook.test', body: '{}', dispatched: 0, created_at: now }).execute();

    // Nothing is old enough yet.
    const { pruneWebhookHistory } = await import('../../src/usecases/webhooks/sweep-webhook-attempts.js');
    expect(await pruneWebhookHistory(server.deps)).toBe(0);
    // 31 days later everything finished is gone.
    const later = { ...server.deps, clock: { now: () => Date.now() + 31 * 86_400_000 } };
    expect(await pruneWebhookHistory(later)).toBeGreaterThan(0);
    expect(await countOf('webhook_attempts')).toBe(1);
    expect(await countOf('webhook_attempts', ['status', 'pending'])).toBe(1);
    expect(await countOf('webhook_events')).toBe(1);
    await server.container.db.deleteFrom('webhook_events').where('id', '=', '000000010000000000000001').execute();
  });
});
