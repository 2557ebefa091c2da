import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import type { FastifyInstance } from 'fastify';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { callerOf } from '../../src/http/auth.js';
import { createSessionToken } from '../../src/usecases/auth/session-tokens.js';

/** A test-only route that answers with the authenticated caller, so scoping is visible. */
async function whoAmIRoute(app: FastifyInstance): Promise<void> {
  app.get('/test/whoami', async (request) => ({ data: callerOf(request) }));
}

describe('authentication', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ appOptions: { extraRoutes: [whoAmIRoute] } });
  });
  afterAll(async () => server?.close());

  const unauthorized = async (headers: Record<string, string>, message: string) => {
    const response = await server.request('GET', '/test/whoami', { key: null, headers });
    expect(response.status).toBe(401);
    expectErrorBody(response.body, 401, '/test/whoami');
    expect(response.body).toMatchObject({ message, error: 'Unauthorized' });
  };

  it('answers 401 with the exact messages for a missing, malformed or unknown key', async () => {
    await unauthorized({}, 'Missing authorization header');
    await unauthorized({ authorization: '' }, 'Missing authorization header');
    await unauthorized({ authorization: 'Basic dXNlcjpwYXNz' }, 'Invalid authentication scheme: "Basic"');
    await unauthorized({ authorization: 'Token abc' }, 'Invalid authentication scheme: "Token"');
    await unauthorized({ authorization: 'ApiKey' }, 'API Key not found');
    await unauthorized({ authorization: 'ApiKey 0123456789abcdef' }, 'API Key not found');
    await unauthorized({ authorization: `ApiKey ${server.devKey}x` }, 'API Key not found');
  });

  it('scopes an ApiKey caller to its environment', async () => {
    const dev = await server.request('GET', '/test/whoami');
    expect(dev.status).toBe(200);
    expect(dev.body.data).toMatchObject({ kind: 'apiKey', environmentId: server.devEnvironmentId });
    const prod = await server.request('GET', '/test/whoami', { key: server.prodKey });
    expect(prod.body.data).toMatchObject({ kind: 'apiKey', environmentId: server.prodEnvironmentId });
  });

  it('accepts a valid Bearer session token as a session caller', async () => {
    const response = await server.request('GET', '/test/whoami', { bearer: server.prodSession });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ kind: 'session', environmentId: server.prodEnvironmentId });
  });

  it('rejects an expired, forged or tampered Bearer token', async () => {
    const expired = await createSessionToken(
      { ...server.deps, clock: { now: () => Date.now() - 2 * 3600_000 } },
      { environmentName: 'development', ttlSeconds: 60 },
    );
    const forged = await new SignJWT({ env: server.devEnvironmentId, org: 'x' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('herald')
      .setAudience('herald-session')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('not the server secret, but long enough'));
    const [header, , signature] = server.devSession.split('.');
    const otherPayload = Buffer.from(JSON.stringify({ env: server.prodEnvironmentId, org: 'x', iss: 'herald', aud: 'herald-session' })).toString('base64url');
    const tampered = `${header}.${otherPayload}.${signature}`;

    for (const token of [expired.token, forged, tampered, 'not-a-jwt', '']) {
      await unauthorized({ authorization: `Bearer ${token}` }, 'Invalid or expired session token');
    }
  });

  it('keeps /health, /openapi.json and /docs public', async () => {
    expect((await server.request('GET', '/health', { key: null })).status).toBe(200);
    expect((await server.request('GET', '/openapi.json', { key: null })).status).toBe(200);
    const docs = await server.request('GET', '/docs', { key: null });
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    // The router matches paths in any case; the public pages stay public in any case too, the API stays protected.
    expect((await server.request('GET', '/Docs/json', { key: null })).status).toBe(200);
    expect((await server.request('GET', '/V1/Messages', { key: null })).status).toBe(401);
    expect((await server.request('GET', '/docsx', { key: null })).status).not.toBe(200);
  });

  it('protects the real routes that exist', async () => {
    for (const [method, url] of [
      ['GET', '/v1/integrations'],
      ['GET', '/v1/messages'],
      ['GET', '/v1/notifications'],
      ['GET', '/v2/subscribers'],
      ['POST', '/v1/events/trigger'],
    ] as const) {
      if (!server.app.hasRoute({ method, url })) continue;
      const response = await server.request(method, url, { key: null, body: method === 'POST' ? {} : undefined });
      expect(response.status, `${method} ${url}`).toBe(401);
      expect(response.body.message).toBe('Missing authorization header');
    }
  });
});
