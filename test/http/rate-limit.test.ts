import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { rateLimitCategory } from '../../src/http/rate-limit.js';
import { checkRateLimit, checkRateLimitNow, currentWindow, RateLimitExceeded } from '../../src/usecases/requests/check-rate-limit.js';
import { LocalRateLimitStore } from '../../src/store/local-rate-limit-store.js';
import { loadConfig } from '../../src/config.js';
import { SqlRateLimitStore } from '../../src/store/sql/rate-limit-store.js';

/** Test-only routes, one per category, so the limits are tested without the resource routes. */
async function probeRoutes(app: FastifyInstance): Promise<void> {
  app.post('/v1/events/__rate-limit-probe', async (_request, reply) => reply.status(201).send({ data: { ok: true } }));
  app.post('/v1/topics/__rate-limit-probe', async (_request, reply) => reply.status(201).send({ data: { ok: true } }));
  app.get('/v1/topics/__rate-limit-probe', async () => ({ data: { ok: true } }));
}

/**
 * Counters read back from the SQL table. Under HERALD_TEST_MODE=scaleout they live in Redis (its own
 * contract tests cover it): storage assertions are then skipped and only the HTTP ones run.
 */
function sqlBacked(server: TestServer): boolean {
  return server.deps.rateLimits instanceof SqlRateLimitStore;
}

async function counters(server: TestServer, environmentId: string) {
  const rows = await server.container.db
    .selectFrom('rate_limit_counters')
    .selectAll()
    .where('environment_id', '=', environmentId)
    .orderBy('category')
    .orderBy('window_start')
    .execute();
  return rows.map((row) => ({ category: row.category, windowStart: row.window_start, count: Number(row.count) }));
}

describe('rate limit categories', () => {
  it('classifies trigger, configuration and global requests', () => {
    expect(rateLimitCategory('POST', '/v1/events/trigger')).toBe('trigger');
    expect(rateLimitCategory('POST', '/v1/events/trigger/bulk')).toBe('trigger');
    expect(rateLimitCategory('POST', '/v1/events/trigger/broadcast')).toBe('trigger');
    expect(rateLimitCategory('DELETE', '/v1/events/trigger/:transactionId')).toBe('trigger');
    expect(rateLimitCategory('PUT', '/v1/integrations/:integrationId')).toBe('configuration');
    expect(rateLimitCategory('POST', '/v1/integrations')).toBe('configuration');
    expect(rateLimitCategory('DELETE', '/v2/workflows/:workflowId')).toBe('configuration');
    expect(rateLimitCategory('PATCH', '/v2/topics/:topicKey')).toBe('configuration');
    expect(rateLimitCategory('GET', '/v1/integrations')).toBe('global');
    expect(rateLimitCategory('GET', '/v2/workflows')).toBe('global');
    expect(rateLimitCategory('PATCH', '/v2/subscribers/:subscriberId')).toBe('global');
    expect(rateLimitCategory('GET', '/v1/eventsx')).toBe('global');
    expect(rateLimitCategory('POST', '/v1/integrationsx')).toBe('global');
  });

  it('computes the fixed window and the seconds left in it', () => {
    expect(currentWindow(Date.parse('2026-11-22T12:00:00.250Z'), 1)).toEqual({ windowStart: '2026-11-22T12:00:00.000Z', resetSeconds: 1 });
    expect(currentWindow(Date.parse('2026-11-22T12:00:42.500Z'), 60)).toEqual({ windowStart: '2026-11-22T12:00:00.000Z', resetSeconds: 18 });
    // The window's text is kept between calls: a call in another window (or another window size) gets its own.
    expect(currentWindow(Date.parse('2026-11-22T12:00:42.500Z'), 1).windowStart).toBe('2026-11-22T12:00:42.000Z');
    expect(currentWindow(Date.parse('2026-11-22T12:00:43.001Z'), 1).windowStart).toBe('2026-11-22T12:00:43.000Z');
    expect(currentWindow(Date.parse('2026-11-22T12:00:43.999Z'), 60).windowStart).toBe('2026-11-22T12:00:00.000Z');
  });

  it('counts in memory without a promise where the store can (checkRateLimitNow), the same count as checkRateLimit', async () => {
    const rateLimits = new LocalRateLimitStore();
    const deps = { config: { ...loadConfig({}), rateLimit: { ...loadConfig({}).rateLimit, global: 2 } }, clock: { now: () => Date.parse('2026-11-22T12:00:00.250Z') }, rateLimits };
    const input = { environmentId: 'env', category: 'global' as const };
    expect(checkRateLimitNow(deps, input)).toEqual({ limit: 2, remaining: 1, resetSeconds: 1, policy: '2;w=1;name="global"' });
    expect(await checkRateLimit(deps, input)).toMatchObject({ remaining: 0 });
    expect(() => checkRateLimitNow(deps, input)).toThrow(RateLimitExceeded);
    // A store without an in-memory count (Redis, SQL) is left to checkRateLimit.
    expect(checkRateLimitNow({ ...deps, rateLimits: { hit: rateLimits.hit.bind(rateLimits) } }, input)).toBeUndefined();
  });
});

describe('rate limits over HTTP', () => {
  let server: TestServer;
  let now = Date.parse('2026-11-22T12:00:10.000Z');

  beforeAll(async () => {
    server = await startTestServer({
      clock: { now: () => now },
      config: { rateLimit: { enabled: true, windowSeconds: 60, trigger: 3, configuration: 2, global: 4 } },
      appOptions: { extraRoutes: [probeRoutes] },
    });
  });
  afterAll(async () => server?.close());

  it('counts each category separately and sends the RateLimit headers', async () => {
    const first = await server.request('POST', '/v1/events/__rate-limit-probe', { body: {} });
    expect(first.status).toBe(201);
    expect(first.headers.get('ratelimit-limit')).toBe('3');
    expect(first.headers.get('ratelimit-remaining')).toBe('2');
    expect(first.headers.get('ratelimit-reset')).toBe('50');
    expect(first.headers.get('ratelimit-policy')).toBe('3;w=60;name="trigger"');

    const configuration = await server.request('POST', '/v1/topics/__rate-limit-probe', { body: {} });
    expect(configuration.headers.get('ratelimit-policy')).toBe('2;w=60;name="configuration"');
    expect(configuration.headers.get('ratelimit-remaining')).toBe('1');

    const global = await server.request('GET', '/v1/topics/__rate-limit-probe');
    expect(global.headers.get('ratelimit-policy')).toBe('4;w=60;name="global"');
    expect(global.headers.get('ratelimit-remaining')).toBe('3');

    if (sqlBacked(server)) expect(await counters(server, server.devEnvironmentId)).toEqual([
      { category: 'configuration', windowStart: '2026-11-22T12:00:00.000Z', count: 1 },
      { category: 'global', windowStart: '2026-11-22T12:00:00.000Z', count: 1 },
      { category: 'trigger', windowStart: '2026-11-22T12:00:00.000Z', count: 1 },
    ]);
  });

  it('answers 429 over the limit, with Retry-After, per environment, and resets with the next window', async () => {
    await server.request('POST', '/v1/events/__rate-limit-probe', { body: {} });
    await server.request('POST', '/v1/events/__rate-limit-probe', { body: {} });
    const limited = await server.request('POST', '/v1/events/__rate-limit-probe', { body: {} });
    expect(limited.status).toBe(429);
    expectErrorBody(limited.body, 429, '/v1/events/__rate-limit-probe');
    expect(limited.body.message).toBe('API rate limit exceeded');
    expect(limited.headers.get('retry-after')).toBe('50');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('ratelimit-limit')).toBe('3');

    // Other categories and the other environment are unaffected.
    expect((await server.request('GET', '/v1/topics/__rate-limit-probe')).status).toBe(200);
    const prod = await server.request('POST', '/v1/events/__rate-limit-probe', { body: {}, key: server.prodKey });
    expect(prod.status).toBe(201);
    expect(prod.headers.get('ratelimit-remaining')).toBe('2');

    now += 60_000;
    const nextWindow = await server.request('POST', '/v1/events/__rate-limit-probe', { body: {} });
    expect(nextWindow.status).toBe(201);
    expect(nextWindow.headers.get('ratelimit-remaining')).toBe('2');
    if (sqlBacked(server)) {
      const rows = await counters(server, server.devEnvironmentId);
      expect(rows.filter((row) => row.category === 'trigger')).toEqual([
        { category: 'trigger', windowStart: '2026-11-22T12:00:00.000Z', count: 4 },
        { category: 'trigger', windowStart: '2026-11-22T12:01:00.000Z', count: 1 },
      ]);
    }
  });

  it('sends the headers on error answers of authenticated requests but not on public routes or 401s', async () => {
    const notFound = await server.request('GET', '/v1/no-such-route');
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('ratelimit-policy')).toMatch(/name="global"$/);
    const unauthenticated = await server.request('GET', '/v1/topics/__rate-limit-probe', { key: null });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('ratelimit-limit')).toBeNull();
    const health = await server.request('GET', '/health', { key: null });
    expect(health.headers.get('ratelimit-limit')).toBeNull();
  });

  it('uses the real GET /v1/integrations route when it exists', async (context) => {
    if (!server.app.hasRoute({ method: 'GET', url: '/v1/integrations' })) return context.skip();
    const response = await server.request('GET', '/v1/integrations');
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-policy')).toBe('4;w=60;name="global"');
  });

  it('prunes windows older than the previous one', async (context) => {
    if (!sqlBacked(server)) return context.skip();
    now += 10 * 60_000;
    await server.request('GET', '/v1/topics/__rate-limit-probe');
    const windows = new Set((await counters(server, server.devEnvironmentId)).map((row) => row.windowStart));
    expect([...windows]).toEqual([new Date(Math.floor(now / 60_000) * 60_000).toISOString()]);
  });
});

describe('rate limits turned off', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      config: { rateLimit: { enabled: false, windowSeconds: 1, trigger: 1, configuration: 1, global: 1 } },
      appOptions: { extraRoutes: [probeRoutes] },
    });
  });
  afterAll(async () => server?.close());

  it('sends no headers, never limits and counts nothing', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await server.request('POST', '/v1/events/__rate-limit-probe', { body: {} });
      expect(response.status).toBe(201);
      expect(response.headers.get('ratelimit-limit')).toBeNull();
    }
    if (sqlBacked(server)) expect(await counters(server, server.devEnvironmentId)).toEqual([]);
  });
});
