import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutApiTrailingSlash } from '../../src/http/trailing-slash.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

describe('withoutApiTrailingSlash', () => {
  it('drops one trailing slash of a versioned API path, keeping the query', () => {
    expect(withoutApiTrailingSlash('/v1/messages/')).toBe('/v1/messages');
    expect(withoutApiTrailingSlash('/v1/messages/?limit=5&page=1')).toBe('/v1/messages?limit=5&page=1');
    expect(withoutApiTrailingSlash('/v2/subscribers/abc/')).toBe('/v2/subscribers/abc');
    expect(withoutApiTrailingSlash('/V1/Messages/')).toBe('/V1/Messages');
  });

  it('leaves everything else as it is', () => {
    for (const url of ['/v1/messages', '/v1/messages?x=/', '/dashboard/', '/socket.io/?EIO=4', '/', '/v1/', '/vx/messages/', '/health/', '/V1x/']) {
      expect(withoutApiTrailingSlash(url), url).toBe(url);
    }
  });
});

// One server for both: the two behaviours of Novu's Express router that Fastify's differs from.
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe('a trailing slash on the API, as Novu answers it', () => {
  it('answers /v1/messages/ and /v1/notifications/?limit=5 as without the slash; the dashboard keeps its redirect', async () => {
    const withSlash = await server.request('GET', '/v1/messages/?limit=5');
    const without = await server.request('GET', '/v1/messages?limit=5');
    expect(withSlash.status).toBe(200);
    expect(withSlash.body).toEqual(without.body);
    expect((await server.request('GET', '/v1/notifications/?limit=5')).status).toBe(200);
    expect((await server.request('GET', '/v1/notifications/000000000000000000000000/')).status).toBe(404);
    const dashboard = await fetch(`${server.url}/dashboard`, { redirect: 'manual' });
    expect(dashboard.status).toBe(302);
    expect(dashboard.headers.get('location')).toBe('/dashboard/');
  });
});

describe('the case of a path, as Novu’s router ignores it', () => {
  it('matches /V1/Messages as /v1/messages, while a parameter keeps its case', async () => {
    const upper = await server.request('GET', '/V1/Messages?limit=5');
    expect(upper.status).toBe(200);
    expect(upper.body).toEqual((await server.request('GET', '/v1/messages?limit=5')).body);
    expect((await server.request('GET', '/V1/Notifications/?limit=5')).status).toBe(200);
    const created = await server.request('POST', '/v1/subscribers', { body: { subscriberId: 'MixedCase', firstName: 'Mia' } });
    expect(created.status, created.text).toBe(201);
    const found = await server.request('GET', '/V1/SUBSCRIBERS/MixedCase');
    expect(found.status).toBe(200);
    expect(found.body.data.subscriberId).toBe('MixedCase');
    expect((await server.request('GET', '/v1/subscribers/mixedcase')).status).toBe(404);
  });
});
