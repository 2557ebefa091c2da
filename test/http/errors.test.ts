import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { EncryptedIdempotencyStore } from '../../src/store/encrypted-idempotency-store.js';
import { SqlIdempotencyStore } from '../../src/store/sql/idempotency-store.js';

const DRIVER_TEXT = 'SQLITE_CORRUPT: secret-table-name near "select"';

/** Test-only routes: one throws an unexpected error carrying driver-like text, one answers normally. */
async function failingRoutes(app: FastifyInstance): Promise<void> {
  app.get('/test/explode', async () => {
    throw new Error(DRIVER_TEXT);
  });
  app.post('/test/echo', async (request, reply) => reply.status(201).send({ data: request.body ?? null }));
}

function memoryLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('error answers', () => {
  let server: TestServer;
  const logs = memoryLogger();
  beforeAll(async () => {
    server = await startTestServer({ appOptions: { extraRoutes: [failingRoutes], logger: logs.logger } });
  });
  afterAll(async () => server?.close());

  it('answers an unknown route with 404 in the error body shape', async () => {
    const response = await server.request('GET', '/v1/no-such-thing?x=1');
    expect(response.status).toBe(404);
    expectErrorBody(response.body, 404);
    expect(response.body).toMatchObject({ message: 'Cannot GET /v1/no-such-thing', error: 'Not Found' });
    const badUrl = await server.request('GET', '/v1/%zz');
    expect(badUrl.status).toBe(400);
    expectErrorBody(badUrl.body, 400);
    expect(badUrl.body.message).toEqual(['url is not a valid URL']);
    const wrongMethod = await server.request('PATCH', '/health');
    expect(wrongMethod.status).toBe(404);
    expectErrorBody(wrongMethod.body, 404);
  });

  it('answers an unexpected error with 500 and an errorId, never the stack or driver text, and logs the errorId', async () => {
    const response = await server.request('GET', '/test/explode');
    expect(response.status).toBe(500);
    expectErrorBody(response.body, 500, '/test/explode');
    expect(response.body.errorId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.message).toContain(response.body.errorId);
    expect(response.body.error).toBe('Internal Server Error');
    expect(response.text).not.toContain('SQLITE');
    expect(response.text).not.toContain('secret-table-name');
    expect(response.text).not.toMatch(/at .*\.ts:\d+/);
    expect(Object.keys(response.body).sort()).toEqual(['error', 'errorId', 'message', 'path', 'statusCode', 'timestamp']);

    const logged = logs.lines.map((line) => JSON.parse(line)).find((entry) => entry.errorId === response.body.errorId);
    expect(logged).toBeDefined();
    expect(logged.level).toBe(50);
    expect(JSON.stringify(logged)).toContain('secret-table-name');
  });
});

describe('a database that is gone', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Rate limits off: otherwise their counter, the first statement of every request, answers all the 503s.
    server = await startTestServer({
      config: { rateLimit: { enabled: false, windowSeconds: 1, trigger: 1, configuration: 1, global: 1 } },
      appOptions: { extraRoutes: [failingRoutes] },
    });
    // One request first, so the API-key cache holds the dev key and the request reaches the store.
    expect((await server.request('POST', '/test/echo', { body: {} })).status).toBe(201);
    await server.container.db.destroy();
  });
  afterAll(async () => server?.close());

  it('answers 503 with Retry-After, and never another 5xx', async () => {
    // Every request below needs the database somewhere: the idempotency claim, the key lookup, the route.
    type Attempt = [string, string, { body?: unknown; key?: string | null; headers?: Record<string, string> }];
    // Idempotency keys live in the database in embedded mode, in Redis in scale-out mode.
    const idempotent: Attempt[] =
      (server.deps.idempotency instanceof EncryptedIdempotencyStore ? server.deps.idempotency.inner : server.deps.idempotency) instanceof SqlIdempotencyStore ? [['POST', '/test/echo', { body: { a: 1 }, headers: { 'idempotency-key': 'gone-1' } }]] : [];
    const requests: Attempt[] = [
      ...idempotent,
      // An API key not yet cached must be looked up in the store.
      ['POST', '/test/echo', { body: {}, key: server.prodKey }],
      ['GET', '/v1/integrations', {}],
      ['GET', '/v2/subscribers', {}],
      ['GET', '/v1/messages', {}],
      ['GET', '/v1/notifications', {}],
      ['POST', '/v2/subscribers', { body: { subscriberId: 'gone' } }],
    ];
    for (const [method, path, options] of requests) {
      if (!path.startsWith('/test') && !path.includes('no-such') && !server.app.hasRoute({ method, url: path })) continue;
      const response = await server.request(method, path, options);
      expect(response.status, `${method} ${path}: ${response.text}`).toBe(503);
      expectErrorBody(response.body, 503, path);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(response.text).not.toMatch(/destroyed|sqlite|kysely/i);
    }
    // What needs no database still answers as usual.
    expect((await server.request('POST', '/test/echo', { key: null })).status).toBe(401);
    expect((await server.request('GET', '/v1/no-such-thing')).status).toBe(404);
    expect((await server.request('POST', '/test/echo', { body: { a: 2 } })).status).toBe(201);
  });

  it('reports the storage as down on /health', async () => {
    const response = await server.request('GET', '/health', { key: null });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ status: 'degraded', checks: { storage: { status: 'down' } } });
  });
});
