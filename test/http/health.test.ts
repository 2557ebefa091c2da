import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

describe('GET /health', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  it('reports ok with the storage up, without a key', async () => {
    const response = await server.request('GET', '/health', { key: null });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', checks: expect.objectContaining({ storage: { status: 'up' } }) });
  });

  it('reports degraded with 503 once the database is closed', async () => {
    await server.container.db.destroy();
    const response = await server.request('GET', '/health', { key: null });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ status: 'degraded', checks: { storage: { status: 'down' } } });
  });
});

/** Echoes a body back; stands in for a route that receives credentials when the real one is absent. */
async function echoRoute(app: FastifyInstance): Promise<void> {
  app.post('/test/echo', async (request, reply) => reply.status(201).send({ data: request.body }));
}

/** A stream for pino that keeps each line it is written. */
function lineCollector(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

describe('request logs', () => {
  const { lines, stream } = lineCollector();
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ appOptions: { logger: pino({ level: 'debug' }, stream), extraRoutes: [echoRoute] } });
  });
  afterAll(async () => server?.close());

  it('writes one line per request and never a key, token or credential', async () => {
    const credential = 'cred-value-7f3a9c1e5b';
    const before = lines.length;
    const requests: Array<Promise<unknown>> = [
      server.request('POST', '/test/echo?apiKey=query-secret-1', { body: { credentials: { apiKey: credential } } }),
      server.request('GET', '/v1/no-such-route', { bearer: server.devSession }),
      server.request('GET', '/health', { key: null }),
      server.request('GET', '/test/echo', { key: 'wrong-key-5d1c' }),
      server.request('GET', '/test/echo', { headers: { authorization: 'Basic dXNlcjpzZWNyZXQ=' } }),
    ];
    if (server.app.hasRoute({ method: 'POST', url: '/v1/integrations' })) {
      requests.push(
        server.request('POST', '/v1/integrations', {
          bearer: server.devSession,
          body: { providerId: 'sendgrid', channel: 'email', name: 'Logged', credentials: { apiKey: credential, from: 'a@example.com' }, active: true, check: false },
        }),
      );
    }
    await Promise.all(requests);

    const written = lines.slice(before);
    const requestLines = written.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
    expect(requestLines).toHaveLength(requests.length);
    for (const entry of requestLines) {
      expect(entry).toMatchObject({ level: 30, method: expect.any(String), url: expect.any(String), statusCode: expect.any(Number) });
      expect(entry.url).not.toContain('?');
      // The line's keys and their order (what log readers parse; session 16 and 18 tried writing it another way).
      expect(Object.keys(entry)).toEqual(['level', 'time', 'pid', 'hostname', 'reqId', 'method', 'url', 'statusCode', 'ms', 'msg']);
      expect(entry.reqId).toMatch(/^req-/);
    }
    const text = written.join('\n');
    for (const secret of [server.devKey, server.devSession, credential, 'query-secret-1', 'wrong-key-5d1c', 'dXNlcjpzZWNyZXQ=', 'ApiKey ', 'Bearer ']) {
      expect(text).not.toContain(secret);
    }
    expect(text.toLowerCase()).not.toContain('authorization');
  });
});

describe('request.log', () => {
  const { lines, stream } = lineCollector();
  const logger = pino({ level: 'info' }, stream);
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof logger.child>) => {
    children++;
    return child(...args);
  }) as typeof logger.child;
  /** Logs through request.log, as the error handler and the idempotency hooks do. */
  async function loggingRoute(app: FastifyInstance): Promise<void> {
    app.get('/test/logs', async (request) => {
      request.log.warn({ note: 'from the route' }, 'route warning');
      return { ok: true };
    });
  }
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ appOptions: { logger, extraRoutes: [loggingRoute] } });
  });
  afterAll(async () => server?.close());

  it('is made only when a request logs through it (request-logger.ts), with the request id bound', async () => {
    const before = children;
    const first = lines.length;
    for (let i = 0; i < 5; i++) expect((await server.request('GET', '/health', { key: null })).status).toBe(200);
    expect(children - before).toBe(0);
    // Their request lines were written all the same, without a child (request-line.ts).
    expect(lines.slice(first).map((text) => JSON.parse(text)).filter((entry) => entry.msg === 'request')).toHaveLength(5);

    const start = lines.length;
    expect((await server.request('GET', '/test/logs')).status).toBe(200);
    expect(children - before).toBe(1);
    const [warning, line] = lines.slice(start).map((text) => JSON.parse(text));
    expect(Object.keys(warning)).toEqual(['level', 'time', 'pid', 'hostname', 'reqId', 'note', 'msg']);
    expect(warning).toMatchObject({ level: 40, note: 'from the route', msg: 'route warning' });
    expect(line).toMatchObject({ reqId: warning.reqId, msg: 'request', url: '/test/logs', statusCode: 200 });
  });
});
