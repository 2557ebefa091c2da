import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { bootstrapTenancy } from '../../../src/usecases/tenancy/bootstrap-tenancy.js';
import { listApiKeys } from '../../../src/usecases/dashboard/list-api-keys.js';
import { createApiKey } from '../../../src/usecases/auth/api-keys.js';

/**
 * Issue #25: secret keys made by the first start showed only dots in Settings, because the first start (and
 * `herald keys create`) stored no last-four hint. Every key now keeps one, and keys made before get it back at start.
 */
describe('secret key hints', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => server?.close());

  const caller = (environmentId: string) => ({ kind: 'session' as const, environmentId, organizationId: 'org', actorId: 'test' });

  it('keys made by the first start and by the CLI path show their last four characters', async () => {
    for (const [environmentId, known] of [
      [server.devEnvironmentId, server.devKey],
      [server.prodEnvironmentId, server.prodKey],
    ] as const) {
      const keys = await listApiKeys(server.deps, { caller: caller(environmentId) });
      // The first start's key (random, printed once) and the test's own key.
      expect(keys.length).toBeGreaterThanOrEqual(2);
      for (const key of keys) {
        expect(key.last4, JSON.stringify(key)).toMatch(/^[0-9a-f]{4}$/);
        expect(key.maskedKey).toBe(`••••••••${key.last4}`);
      }
      expect(keys.map((key) => key.last4)).toContain(known.slice(-4));
    }
  });

  it('a key stored without a hint (made before hints were kept) gets it back at the next start', async () => {
    const { secretKey } = await createApiKey(server.deps, { environmentName: 'development' });
    await server.container.db.updateTable('api_keys').set({ hint: null }).execute();
    const before = await listApiKeys(server.deps, { caller: caller(server.devEnvironmentId) });
    expect(before.every((key) => key.maskedKey === '••••••••')).toBe(true);

    const again = await bootstrapTenancy(server.deps);
    expect(again.created).toBe(false);
    const after = await listApiKeys(server.deps, { caller: caller(server.devEnvironmentId) });
    expect(after.every((key) => /^[0-9a-f]{4}$/.test(key.last4 ?? ''))).toBe(true);
    expect(after.map((key) => key.last4)).toContain(secretKey.slice(-4));
    expect(after.map((key) => key.last4)).toContain(server.devKey.slice(-4));
  });
});
