import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../../src/usecases/auth/api-keys.js';
import { authenticateCaller } from '../../../src/usecases/auth/authenticate-caller.js';
import type { ApiKeyRecord } from '../../../src/store/ports.js';
import type { Deps } from '../../../src/usecases/deps.js';
import { LocalKeyRevocations } from '../../../src/store/local-key-revocations.js';
import { forgetCachedApiKey, recallApiKeyCaller } from '../../../src/usecases/auth/authenticate-caller.js';

/** A store that knows one key and counts how often it is asked. */
function storeWithKey(secretKey: string, environmentId: string) {
  const keyHash = hashApiKey(secretKey);
  const record: ApiKeyRecord = { id: `key-of-${environmentId}`, environmentId, organizationId: 'org' };
  const store = {
    lookups: 0,
    tenancy: {
      async findApiKeyByHash(hash: string) {
        store.lookups++;
        return hash === keyHash ? record : undefined;
      },
    },
  };
  return store;
}

type AuthDeps = Pick<Deps, 'store' | 'clock' | 'sessionSecret' | 'keyRevocations'>;

function depsOf(store: ReturnType<typeof storeWithKey>, now = 0, keyRevocations: Deps['keyRevocations'] = new LocalKeyRevocations()): AuthDeps {
  return { store: store as unknown as Deps['store'], clock: { now: () => now }, sessionSecret: new Uint8Array(32), keyRevocations };
}

describe('authenticateCaller key cache', () => {
  it('answers repeat calls from the cache, per store: two stores holding the same key see their own environments', async () => {
    const secret = 'sk_same_secret_in_two_instances';
    const first = storeWithKey(secret, 'env-first');
    const second = storeWithKey(secret, 'env-second');
    expect((await authenticateCaller(depsOf(first), `ApiKey ${secret}`)).environmentId).toBe('env-first');
    expect((await authenticateCaller(depsOf(first), `ApiKey ${secret}`)).environmentId).toBe('env-first');
    expect(first.lookups).toBe(1);
    expect((await authenticateCaller(depsOf(second), `ApiKey ${secret}`)).environmentId).toBe('env-second');
    expect(second.lookups).toBe(1);
  });

  it('asks the store again once the cached entry is 30 s old', async () => {
    const secret = 'sk_expiring_cache_entry';
    const store = storeWithKey(secret, 'env');
    await authenticateCaller(depsOf(store, 0), `ApiKey ${secret}`);
    await authenticateCaller(depsOf(store, 29_999), `ApiKey ${secret}`);
    expect(store.lookups).toBe(1);
    await authenticateCaller(depsOf(store, 30_001), `ApiKey ${secret}`);
    expect(store.lookups).toBe(2);
  });

  it('forgets a key announced as revoked, and skips the cache while announcements could be missed', async () => {
    const secret = 'sk_revoked_key';
    const store = storeWithKey(secret, 'env');
    const revocations = new LocalKeyRevocations();
    revocations.onRevoked((keyHash) => forgetCachedApiKey(store, keyHash));
    await authenticateCaller(depsOf(store, 0, revocations), `ApiKey ${secret}`);
    await authenticateCaller(depsOf(store, 1, revocations), `ApiKey ${secret}`);
    expect(store.lookups).toBe(1);
    await revocations.publish(hashApiKey(secret));
    await authenticateCaller(depsOf(store, 2, revocations), `ApiKey ${secret}`);
    expect(store.lookups).toBe(2);

    const deaf = { listening: false, publish: async () => undefined, onRevoked: () => undefined, close: async () => undefined };
    await authenticateCaller(depsOf(store, 3, deaf), `ApiKey ${secret}`);
    await authenticateCaller(depsOf(store, 4, deaf), `ApiKey ${secret}`);
    expect(store.lookups).toBe(4);
  });
});

describe('recallApiKeyCaller (the auth hook without a promise)', () => {
  it('recalls a key authenticateCaller found, until it is revoked, expires or announcements could be missed', async () => {
    const secret = 'sk_recalled_key';
    const store = storeWithKey(secret, 'env-recalled');
    const revocations = new LocalKeyRevocations();
    revocations.onRevoked((keyHash) => forgetCachedApiKey(store, keyHash));
    expect(recallApiKeyCaller(depsOf(store, 0, revocations), `ApiKey ${secret}`)).toBeUndefined();
    await authenticateCaller(depsOf(store, 0, revocations), `ApiKey ${secret}`);
    expect(recallApiKeyCaller(depsOf(store, 1, revocations), `ApiKey ${secret}`)).toEqual({
      kind: 'apiKey',
      environmentId: 'env-recalled',
      organizationId: 'org',
      actorId: 'key-of-env-recalled',
    });
    expect(recallApiKeyCaller(depsOf(store, 1, revocations), `ApiKey ${secret}x`)).toBeUndefined();
    expect(recallApiKeyCaller(depsOf(store, 1, revocations), `Bearer ${secret}`)).toBeUndefined();
    expect(recallApiKeyCaller(depsOf(store, 1, revocations), undefined)).toBeUndefined();
    // Past the cache entry's 30 s: authenticateCaller asks the store again.
    expect(recallApiKeyCaller(depsOf(store, 30_000, revocations), `ApiKey ${secret}`)).toBeUndefined();
    const deaf = { listening: false, publish: async () => undefined, onRevoked: () => undefined, close: async () => undefined };
    expect(recallApiKeyCaller(depsOf(store, 2, deaf), `ApiKey ${secret}`)).toBeUndefined();

    await revocations.publish(hashApiKey(secret));
    expect(recallApiKeyCaller(depsOf(store, 3, revocations), `ApiKey ${secret}`)).toBeUndefined();
    // Found again (say the revocation was of another process's stale copy): recalled again, and gone with a clear.
    await authenticateCaller(depsOf(store, 4, revocations), `ApiKey ${secret}`);
    expect(recallApiKeyCaller(depsOf(store, 5, revocations), `ApiKey ${secret}`)?.environmentId).toBe('env-recalled');
    forgetCachedApiKey(store, undefined);
    expect(recallApiKeyCaller(depsOf(store, 6, revocations), `ApiKey ${secret}`)).toBeUndefined();
  });

  it('remembers no secret the store did not know', async () => {
    const store = storeWithKey('sk_known', 'env');
    await expect(authenticateCaller(depsOf(store), 'ApiKey sk_unknown')).rejects.toThrow('API Key not found');
    await authenticateCaller(depsOf(store), 'ApiKey sk_known');
    expect(recallApiKeyCaller(depsOf(store), 'ApiKey sk_unknown')).toBeUndefined();
    expect(recallApiKeyCaller(depsOf(store), 'ApiKey sk_known')?.environmentId).toBe('env');
  });
});
