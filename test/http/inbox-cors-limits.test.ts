import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxEvent } from '../../src/realtime/ports.js';
import { recordRealtime } from '../helpers/realtime-recorder.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { insertMessage } from '../helpers/factories.js';

async function identifierOf(server: TestServer, key = server.devKey): Promise<string> {
  return (await server.request('GET', '/v1/environments/me', { key })).body.data.identifier;
}

async function sessionToken(server: TestServer, subscriberId: string): Promise<string> {
  const response = await server.request('POST', '/v1/inbox/session', {
    key: null,
    body: { applicationIdentifier: await identifierOf(server), subscriber: { subscriberId } },
  });
  expect(response.status).toBe(201);
  return response.body.data.token;
}

const preflight = (server: TestServer, path: string, origin: string, headers = 'authorization,content-type,novu-api-version,novu-client-version') =>
  fetch(server.url + path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': headers },
  });

describe('Inbox CORS', () => {
  describe('with the default (any origin)', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer();
    });
    afterAll(async () => server?.close());

    it('answers the preflights the client sends, before authentication', async () => {
      for (const path of ['/v1/inbox/session', '/v1/inbox/notifications/abc/read', '/v1/inbox/notifications/count']) {
        const response = await preflight(server, path, 'https://app.example.com');
        expect(response.status, path).toBe(204);
        expect(response.headers.get('access-control-allow-origin')).toBe('*');
        expect(response.headers.get('access-control-allow-methods')?.split(/,\s*/)).toEqual(['GET', 'POST', 'PATCH', 'DELETE']);
        expect(response.headers.get('access-control-allow-headers')?.split(/,\s*/)).toEqual(
          expect.arrayContaining(['authorization', 'content-type', 'novu-api-version', 'novu-client-version']),
        );
      }
    });

    it('puts CORS headers on Inbox answers, and none on the ApiKey routes', async () => {
      const token = await sessionToken(server, 'cors-user');
      const inbox = await fetch(`${server.url}/v1/inbox/notifications`, { headers: { origin: 'https://app.example.com', authorization: `Bearer ${token}` } });
      expect(inbox.status).toBe(200);
      expect(inbox.headers.get('access-control-allow-origin')).toBe('*');

      const api = await fetch(`${server.url}/v1/messages`, { headers: { origin: 'https://app.example.com', authorization: `ApiKey ${server.devKey}` } });
      expect(api.status).toBe(200);
      expect(api.headers.get('access-control-allow-origin')).toBeNull();
      const apiPreflight = await preflight(server, '/v1/messages', 'https://app.example.com');
      expect(apiPreflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(apiPreflight.status).toBeGreaterThanOrEqual(400);
    });

    it('caches preflights for 10 minutes, refuses one without Origin or Access-Control-Request-Method, and varies on Origin', async () => {
      const answered = await preflight(server, '/v1/inbox/notifications/count', 'https://app.example.com');
      expect(answered.headers.get('access-control-max-age')).toBe('600');
      expect(answered.headers.get('content-length')).toBe('0');
      expect(answered.headers.get('vary')).toBe('Origin');

      const noMethod = await fetch(`${server.url}/v1/inbox/session`, { method: 'OPTIONS', headers: { origin: 'https://app.example.com' } });
      expect(noMethod.status).toBe(400);
      expect(await noMethod.text()).toBe('Invalid Preflight Request');
      const noOrigin = await fetch(`${server.url}/v1/inbox/session`, { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } });
      expect(noOrigin.status).toBe(400);

      // The answer depends on the path and the Origin, so every answer says so to caches, CORS or not.
      const api = await fetch(`${server.url}/v1/messages`, { headers: { authorization: `ApiKey ${server.devKey}` } });
      expect(api.headers.get('vary')).toBe('Origin');
      expect([...api.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    });
  });

  describe('with HERALD_INBOX_ALLOWED_ORIGINS', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer({ env: { HERALD_INBOX_ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:5173/' } });
    });
    afterAll(async () => server?.close());

    it('allows the listed origins only', async () => {
      for (const origin of ['https://app.example.com', 'http://localhost:5173']) {
        const allowed = await preflight(server, '/v1/inbox/session', origin);
        expect(allowed.status).toBe(204);
        expect(allowed.headers.get('access-control-allow-origin')).toBe(origin);
        expect(allowed.headers.get('vary')).toContain('Origin');
      }
      const refused = await preflight(server, '/v1/inbox/session', 'https://evil.example.com');
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      expect(refused.headers.get('access-control-allow-methods')).toBeNull();
      expect(refused.status).toBeGreaterThanOrEqual(400);
    });
  });
});

describe('Inbox rate limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { HERALD_RATE_LIMIT_WINDOW_SECONDS: '3600', HERALD_RATE_LIMIT_INBOX: '3', HERALD_RATE_LIMIT_INBOX_SESSION: '4' },
    });
  });
  afterAll(async () => server?.close());

  it('limits each subscriber on its own, with the 429 body of the conventions', async () => {
    const first = await sessionToken(server, 'limited-a');
    const second = await sessionToken(server, 'limited-b');
    for (let i = 0; i < 3; i++) expect((await server.request('GET', '/v1/inbox/notifications', { bearer: first })).status).toBe(200);
    const limited = await server.request('GET', '/v1/inbox/notifications', { bearer: first });
    expect(limited.status).toBe(429);
    expectErrorBody(limited.body, 429, '/v1/inbox/notifications');
    expect(limited.body.message).toBe('API rate limit exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-limit')).toBe('3');
    // Another subscriber of the same environment, and the environment's API key, are not affected.
    expect((await server.request('GET', '/v1/inbox/notifications/count', { bearer: second })).status).toBe(200);
    expect((await server.request('GET', '/v1/messages')).status).toBe(200);
  });

  it('limits the session route per application identifier', async () => {
    // Two sessions were made above; two more fit the limit of 4.
    const devIdentifier = await identifierOf(server);
    const body = { applicationIdentifier: devIdentifier, subscriber: { subscriberId: 'session-flood' } };
    for (let i = 0; i < 2; i++) expect((await server.request('POST', '/v1/inbox/session', { key: null, body })).status).toBe(201);
    const limited = await server.request('POST', '/v1/inbox/session', { key: null, body });
    expect(limited.status).toBe(429);
    expectErrorBody(limited.body, 429, '/v1/inbox/session');
    const prod = await server.request('POST', '/v1/inbox/session', {
      key: null,
      body: { applicationIdentifier: await identifierOf(server, server.prodKey), subscriber: { subscriberId: 'session-flood' } },
    });
    expect(prod.status).toBe(201);
  });
});

describe('the end of a snooze', () => {
  let server: TestServer;
  const events: InboxEvent[] = [];
  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    recordRealtime(server, events);
  });
  afterAll(async () => server?.close());

  it('a queue job returns the message to the feed with a new deliveredAt entry and announces it as delivered', async () => {
    const token = await sessionToken(server, 'snoozer');
    const subscriber = (await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'snoozer'))!;
    const message = await insertMessage(server.deps.store, subscriber);
    // 3 s out (was 1.5 s): the snooze and the read of the empty feed must both come before its end on a loaded machine.
    const end = Date.now() + 3000;
    const until = new Date(end).toISOString();
    const snoozed = await server.request('PATCH', `/v1/inbox/notifications/${message._id}/snooze`, { bearer: token, body: { snoozeUntil: until } });
    expect(snoozed.status).toBe(200);
    const feed = async () =>
      (await server.request('GET', '/v1/inbox/notifications?archived=false&snoozed=false', { bearer: token })).body.data as Array<{ id: string; deliveredAt: string[] }>;
    const whileSnoozed = await feed();
    expect(Date.now(), 'the feed was read before the snooze ended').toBeLessThan(end);
    expect(whileSnoozed).toEqual([]);

    const deadline = Date.now() + 15_000;
    let back: Array<{ id: string; deliveredAt: string[] }> = [];
    while (Date.now() < deadline) {
      server.wake();
      back = await feed();
      if (back.length) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(back.map((n) => n.id)).toEqual([message._id]);
    expect(back[0].deliveredAt).toHaveLength(2);
    expect(Date.parse(back[0].deliveredAt[1])).toBeGreaterThanOrEqual(Date.parse(until));
    const delivered = events.filter((e) => e.kind === 'message-delivered' && e.message._id === message._id);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ audience: { environmentId: server.devEnvironmentId, subscriberRecordId: subscriber._id } });
  });

  it('a message snoozed again meanwhile stays snoozed until its new time', async () => {
    const token = await sessionToken(server, 'resnoozer');
    const subscriber = (await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'resnoozer'))!;
    const message = await insertMessage(server.deps.store, subscriber);
    const snooze = (until: string) => server.request('PATCH', `/v1/inbox/notifications/${message._id}/snooze`, { bearer: token, body: { snoozeUntil: until } });
    // The first end is far enough out for the second snooze to come first on a loaded machine (at 1 s, two slow
    // requests could let it pass first, and the message came back before it was snoozed again); the check waits past it.
    const first = Date.now() + 3000;
    expect((await snooze(new Date(first).toISOString())).status).toBe(200);
    const later = new Date(Date.now() + 3600_000).toISOString();
    expect((await snooze(later)).status).toBe(200);
    expect(Date.now(), 'the second snooze came after the first one ended').toBeLessThan(first);
    await new Promise((resolve) => setTimeout(resolve, first + 1000 - Date.now()));
    server.wake();
    await server.waitForIdle({ ignoreDelayed: true });
    const stored = await server.deps.store.messages.get(server.devEnvironmentId, message._id);
    expect(stored?.snoozedUntil).toBe(later);
    expect(stored?.deliveredAt).toHaveLength(1);
  });
});
