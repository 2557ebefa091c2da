import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';

/** A test-only route with a schema of each kind the resource routes use; it records what it received. */
const received: unknown[] = [];
async function schemaRoute(app: FastifyInstance): Promise<void> {
  app.post(
    '/test/validated',
    {
      schema: {
        querystring: Type.Object({
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
          channel: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('sms')])),
          mode: Type.Optional(Type.String({ enum: ['fast', 'slow'] })),
        }),
        body: Type.Object({
          name: Type.String({ minLength: 2 }),
          email: Type.Optional(Type.String({ format: 'email' })),
          nested: Type.Optional(Type.Object({ count: Type.Integer() })),
          tags: Type.Optional(Type.Array(Type.String(), { maxItems: 2 })),
        }),
      },
    },
    async (request, reply) => {
      received.push(request.body);
      return reply.status(201).send({ data: request.body });
    },
  );
}

const BODY_LIMIT = 2048;

describe('validation from the schemas', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The trigger routes' larger limit set to the same value: every route here answers 413 above BODY_LIMIT
    // (the two limits apart: body-limits.test.ts).
    server = await startTestServer({ env: { HERALD_BODY_LIMIT_BYTES: String(BODY_LIMIT), HERALD_LARGE_BODY_LIMIT_BYTES: String(BODY_LIMIT) }, appOptions: { extraRoutes: [schemaRoute] } });
  });
  afterAll(async () => server?.close());

  const badRequest = async (path: string, body: unknown, messages: string[]) => {
    const before = received.length;
    const response = await server.request('POST', path, { body });
    expect(response.status).toBe(400);
    expectErrorBody(response.body, 400, path);
    expect(response.body.error).toBe('Bad Request');
    expect(response.body.message).toEqual(messages);
    expect(received.length).toBe(before);
  };

  it('names the field in every 400 message', async () => {
    await badRequest('/test/validated?limit=51', { name: 'ok' }, ['limit must be <= 50']);
    await badRequest('/test/validated?limit=0', { name: 'ok' }, ['limit must be >= 1']);
    await badRequest('/test/validated?limit=abc', { name: 'ok' }, ['limit must be integer']);
    await badRequest('/test/validated?channel=push&mode=other', { name: 'ok' }, [
      'channel must be one of the following values: email, sms',
      'mode must be one of the following values: fast, slow',
    ]);
    await badRequest('/test/validated', {}, ['name is required']);
    await badRequest('/test/validated', { name: 'a', email: 'nope', nested: { count: 'x' }, tags: ['a', 'b', 'c'] }, [
      'name must NOT have fewer than 2 characters',
      'email must match format "email"',
      'nested.count must be integer',
      'tags must NOT have more than 2 items',
    ]);
    await badRequest('/test/validated', [1, 2], ['body must be object']);
  });

  it('accepts a valid request', async () => {
    const response = await server.request('POST', '/test/validated?limit=50&channel=sms', { body: { name: 'ok', tags: ['a'] } });
    expect(response.status).toBe(201);
    expect(received.at(-1)).toEqual({ name: 'ok', tags: ['a'] });
  });

  it('answers malformed JSON with 400', async () => {
    const before = received.length;
    for (const rawBody of ['{"name": "ok"', '{name: ok}', 'null x']) {
      const response = await server.request('POST', '/test/validated', { rawBody, headers: { 'content-type': 'application/json' } });
      expect(response.status).toBe(400);
      expectErrorBody(response.body, 400, '/test/validated');
      expect(response.body.message).toEqual(['body is not valid JSON']);
    }
    expect(received.length).toBe(before);
  });

  it('reads an empty JSON body as {}, as Novu\'s body parser does: a required property is then missing', async () => {
    const before = received.length;
    const response = await server.request('POST', '/test/validated', { rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expectErrorBody(response.body, 400, '/test/validated');
    expect(response.body.message).toEqual(['name is required']);
    expect(received.length).toBe(before);
  });

  it('answers a bodiless DELETE sent with Content-Type: application/json as it answers one without', async () => {
    const headers = { authorization: `ApiKey ${server.devKey}`, 'content-type': 'application/json' };
    const unknown = await fetch(`${server.url}/v1/messages/000000000000000000000000`, { method: 'DELETE', headers });
    expect(unknown.status).toBe(404);
    expectErrorBody(await unknown.json(), 404, '/v1/messages/000000000000000000000000');
    const noSuchIntegration = await fetch(`${server.url}/v1/integrations/000000000000000000000000`, { method: 'DELETE', headers });
    expect(noSuchIntegration.status).toBe(404);
  });

  it('answers a body that is not JSON with 415', async () => {
    for (const [contentType, rawBody] of [
      ['text/plain', 'name=ok'],
      ['application/x-www-form-urlencoded', 'name=ok'],
      ['multipart/form-data; boundary=x', '--x--'],
      ['application/xml', '<name>ok</name>'],
    ]) {
      const response = await server.request('POST', '/test/validated', { rawBody, headers: { 'content-type': contentType } });
      expect(response.status, contentType).toBe(415);
      expectErrorBody(response.body, 415, '/test/validated');
      expect(response.body.error).toBe('Unsupported Media Type');
    }
  });

  it('answers a body over HERALD_BODY_LIMIT_BYTES with 413', async () => {
    expect(server.config.bodyLimitBytes).toBe(BODY_LIMIT);
    const before = received.length;
    const response = await server.request('POST', '/test/validated', { body: { name: 'x'.repeat(BODY_LIMIT) } });
    expect(response.status).toBe(413);
    expectErrorBody(response.body, 413, '/test/validated');
    expect(response.body.error).toBe('Payload Too Large');
    expect(received.length).toBe(before);
    const justUnder = await server.request('POST', '/test/validated', { body: { name: 'x'.repeat(BODY_LIMIT - 20) } });
    expect(justUnder.status).toBe(201);
  });

  it('applies the same rules on the real routes that exist', async () => {
    const routes = [
      ['POST', '/v1/integrations'],
      ['POST', '/v2/subscribers'],
      ['POST', '/v1/events/trigger'],
    ] as const;
    for (const [method, url] of routes) {
      if (!server.app.hasRoute({ method, url })) continue;
      const malformed = await server.request(method, url, { rawBody: '{"a":', headers: { 'content-type': 'application/json' } });
      expect(malformed.status, `${method} ${url}`).toBe(400);
      const plain = await server.request(method, url, { rawBody: 'a', headers: { 'content-type': 'text/plain' } });
      expect(plain.status, `${method} ${url}`).toBe(415);
      const tooLarge = await server.request(method, url, { body: { name: 'x'.repeat(BODY_LIMIT) } });
      expect(tooLarge.status, `${method} ${url}`).toBe(413);
      const wrongShape = await server.request(method, url, { body: [] });
      expect(wrongShape.status, `${method} ${url}`).toBe(400);
      expect(wrongShape.body.message).toEqual(expect.arrayContaining([expect.any(String)]));
    }
  });
});
