import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../../src/usecases/auth/api-keys.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The bridge repository on the mode's database (SQLite embedded, PostgreSQL with HERALD_TEST_MODE=scaleout): one
 * bridge per environment, the signing key (the sync's key while unrevoked, else the newest), control values per step.
 */
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

async function keyIdOf(secretKey: string): Promise<string> {
  const record = await server.deps.store.tenancy.findApiKeyByHash(hashApiKey(secretKey));
  return record!.id;
}

describe('bridge repository', () => {
  it('keeps one bridge per environment, replaced by each sync', async () => {
    const bridge = server.deps.store.bridge;
    expect(await bridge.getEndpoint(server.devEnvironmentId)).toBeUndefined();
    await bridge.saveEndpoint({ environmentId: server.devEnvironmentId, url: 'https://a.example/api/novu', syncedAt: '2026-11-25T10:00:00.000Z' });
    await bridge.saveEndpoint({ environmentId: server.devEnvironmentId, url: 'https://b.example/api/novu', apiKeyId: 'k1', syncedAt: '2026-11-25T11:00:00.000Z' });
    expect(await bridge.getEndpoint(server.devEnvironmentId)).toEqual({
      environmentId: server.devEnvironmentId,
      url: 'https://b.example/api/novu',
      apiKeyId: 'k1',
      syncedAt: '2026-11-25T11:00:00.000Z',
    });
    expect(await bridge.getEndpoint(server.prodEnvironmentId)).toBeUndefined();
  });

  it("signs with the sync's key while it is unrevoked, else with the environment's newest key", async () => {
    const bridge = server.deps.store.bridge;
    const syncKeyId = await keyIdOf(server.devKey);
    expect(await bridge.signingKey(server.devEnvironmentId, syncKeyId)).toBe(server.devKey);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const secondKey = (await createApiKey(server.deps, { environmentName: 'development' })).secretKey;
    expect(await bridge.signingKey(server.devEnvironmentId, syncKeyId)).toBe(server.devKey);
    expect(await bridge.signingKey(server.devEnvironmentId)).toBe(secondKey);
    await server.deps.store.dashboard.revokeApiKey(server.devEnvironmentId, syncKeyId, '2026-11-25T12:00:00.000Z');
    const fallback = await bridge.signingKey(server.devEnvironmentId, syncKeyId);
    expect(fallback).toBe(secondKey);
    // Another environment's key is never used.
    expect(await bridge.signingKey(server.prodEnvironmentId, syncKeyId)).toBe(server.prodKey);
  });

  it('stores control values per step and forgets a workflow’s values', async () => {
    const bridge = server.deps.store.bridge;
    const env = server.prodEnvironmentId;
    expect(await bridge.getControls(env, 'welcome', 'hello')).toBeUndefined();
    await bridge.saveControls(env, 'welcome', 'hello', { greeting: 'Hi' }, '2026-11-25T10:00:00.000Z');
    await bridge.saveControls(env, 'welcome', 'hello', { greeting: 'Howdy' }, '2026-11-25T11:00:00.000Z');
    await bridge.saveControls(env, 'welcome', 'mail', { signature: 'Acme' }, '2026-11-25T11:00:00.000Z');
    expect(await bridge.getControls(env, 'welcome', 'hello')).toEqual({ greeting: 'Howdy' });
    expect(await bridge.getControls(server.devEnvironmentId, 'welcome', 'hello')).toBeUndefined();
    await bridge.deleteControls(env, 'welcome');
    expect(await bridge.getControls(env, 'welcome', 'mail')).toBeUndefined();
  });
});
