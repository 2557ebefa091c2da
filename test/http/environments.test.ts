import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody, expectRecordId } from '../helpers/shape.js';

describe('environments and application identifiers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  it('GET /v1/environments/me answers the caller environment in Novu shape, with its public identifier', async () => {
    const dev = await server.request('GET', '/v1/environments/me');
    expect(dev.status).toBe(200);
    expectRecordId(dev.body.data._id);
    expect(dev.body.data).toMatchObject({ _id: server.devEnvironmentId, name: 'development', type: 'dev', identifier: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/) });
    expectRecordId(dev.body.data._organizationId);
    const prod = await server.request('GET', '/v1/environments/me', { key: server.prodKey });
    expect(prod.body.data).toMatchObject({ _id: server.prodEnvironmentId, name: 'production', type: 'prod' });
    expect(prod.body.data.identifier).not.toBe(dev.body.data.identifier);
    const stored = await server.deps.store.tenancy.findEnvironmentByIdentifier(dev.body.data.identifier);
    expect(stored?._id).toBe(server.devEnvironmentId);
  });

  it('GET /v1/environments lists the organization environments', async () => {
    const response = await server.request('GET', '/v1/environments');
    expect(response.status).toBe(200);
    expect(response.body.data.map((e: { name: string }) => e.name)).toEqual(['development', 'production']);
    for (const environment of response.body.data) expect(environment.identifier).toEqual(expect.any(String));
  });

  it('answers 401 without a key', async () => {
    const response = await server.request('GET', '/v1/environments/me', { key: null });
    expect(response.status).toBe(401);
    expectErrorBody(response.body, 401, '/v1/environments/me');
  });

  it('keeps an encrypted copy of every new key, never the plaintext', async () => {
    const rows = await server.container.db.selectFrom('api_keys').selectAll().where('environment_id', '=', server.devEnvironmentId).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.key_enc).toMatch(/^v1:/);
      expect(JSON.stringify(row)).not.toContain(server.devKey);
    }
    expect(await server.deps.store.tenancy.listHmacKeys(server.devEnvironmentId)).toContain(server.devKey);
  });
});
