import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EncryptedIdempotencyStore } from '../../src/store/encrypted-idempotency-store.js';
import type { IdempotencyRecord, IdempotencyStore } from '../../src/store/ports.js';
import { SecretBox } from '../../src/store/secret-box.js';

/** The wrapper over a store that keeps what it is given, so the test sees exactly what reaches storage. */
function recordingStore() {
  const records = new Map<string, IdempotencyRecord>();
  const store: IdempotencyStore = {
    async claim(record) {
      const existing = records.get(record.key);
      if (existing) return { claimed: false, existing };
      records.set(record.key, { ...record, state: 'in_progress' });
      return { claimed: true };
    },
    async renew() {},
    async complete(_environmentId, key, response) {
      const record = records.get(key)!;
      records.set(key, { ...record, state: 'done', responseStatus: response.status, responseBody: response.body, responseHeaders: response.headers });
    },
    async release(_environmentId, key) {
      records.delete(key);
    },
  };
  return { store, records };
}

const record = (key: string): IdempotencyRecord => ({
  environmentId: 'env', key, method: 'POST', path: '/v2/webhooks/endpoints', bodyHash: 'h', state: 'in_progress', expiresAt: '2026-11-26T00:00:00.000Z',
});

describe('EncryptedIdempotencyStore', () => {
  const box = new SecretBox(randomBytes(32));

  it('stores answers encrypted and replays them as they were sent', async () => {
    const { store, records } = recordingStore();
    const encrypted = new EncryptedIdempotencyStore(store, box);
    const answer = JSON.stringify({ data: { secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=' } });
    expect(await encrypted.claim(record('k1'), '2026-11-25T00:00:00.000Z')).toEqual({ claimed: true });
    await encrypted.complete('env', 'k1', { status: 201, body: answer, headers: {} });
    expect(records.get('k1')!.responseBody).not.toContain('whsec_');
    expect(records.get('k1')!.responseBody!.startsWith('enc:v1:')).toBe(true);
    const replay = await encrypted.claim(record('k1'), '2026-11-25T00:00:01.000Z');
    expect(replay).toMatchObject({ claimed: false, existing: { state: 'done', responseStatus: 201, responseBody: answer } });
  });

  it('replays answers stored before encryption unchanged, and refuses a body encrypted with another key', async () => {
    const { store, records } = recordingStore();
    records.set('old', { ...record('old'), state: 'done', responseStatus: 201, responseBody: '{"data":{"a":1}}' });
    expect(await new EncryptedIdempotencyStore(store, box).claim(record('old'), '2026-11-25T00:00:00.000Z')).toMatchObject({
      claimed: false,
      existing: { responseBody: '{"data":{"a":1}}' },
    });
    await new EncryptedIdempotencyStore(store, new SecretBox(randomBytes(32))).complete('env', 'old', { status: 201, body: '{}', headers: {} });
    await expect(new EncryptedIdempotencyStore(store, box).claim(record('old'), '2026-11-25T00:00:00.000Z')).rejects.toThrow();
  });
});
