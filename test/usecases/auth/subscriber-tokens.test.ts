import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { loadConfig } from '../../../src/config.js';
import { UnauthorizedError } from '../../../src/domain/errors.js';
import { createSessionToken, verifySessionToken } from '../../../src/usecases/auth/session-tokens.js';
import { createSubscriberToken, verifySubscriberToken } from '../../../src/usecases/auth/subscriber-tokens.js';
import type { Deps } from '../../../src/usecases/deps.js';

const scope = { environmentId: 'env-1', organizationId: 'org-1', subscriberRecordId: 'a'.repeat(24), subscriberId: 'user-1' };

function depsAt(now: number, ttl = 3600, secret = new Uint8Array(32).fill(7)) {
  const config = loadConfig({ HERALD_INBOX_TOKEN_TTL_SECONDS: String(ttl) });
  return { config, clock: { now: () => now }, sessionSecret: secret } as Pick<Deps, 'config' | 'clock' | 'sessionSecret'>;
}

describe('subscriber session tokens', () => {
  it('round-trips the subscriber scope', async () => {
    const deps = depsAt(Date.parse('2026-01-01T00:00:00Z'));
    const token = await createSubscriberToken(deps, scope);
    expect(await verifySubscriberToken(deps, token)).toEqual(scope);
  });

  it('expires after the configured lifetime', async () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const token = await createSubscriberToken(depsAt(start, 120), scope);
    await expect(verifySubscriberToken(depsAt(start + 119_000, 120), token)).resolves.toEqual(scope);
    await expect(verifySubscriberToken(depsAt(start + 121_000, 120), token)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('refuses a token signed with another secret, a dashboard session token, and a subscriber token as a session token', async () => {
    const deps = depsAt(Date.parse('2026-01-01T00:00:00Z'));
    const other = await createSubscriberToken(depsAt(deps.clock.now(), 3600, new Uint8Array(32).fill(8)), scope);
    await expect(verifySubscriberToken(deps, other)).rejects.toBeInstanceOf(UnauthorizedError);

    const store = { tenancy: { findEnvironmentByName: async () => ({ _id: 'env-1', _organizationId: 'org-1' }) } };
    const session = await createSessionToken({ ...deps, store: store as unknown as Deps['store'] }, { environmentName: 'development', ttlSeconds: 60 });
    await expect(verifySubscriberToken(deps, session.token)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(verifySessionToken(deps, await createSubscriberToken(deps, scope))).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('refuses a tampered payload and a token signed with a zero key', async () => {
    const deps = depsAt(Date.parse('2026-01-01T00:00:00Z'));
    const valid = await createSubscriberToken(deps, scope);
    const [header, , signature] = valid.split('.');
    const payload = Buffer.from(JSON.stringify({ typ: 'session', env: 'env-1', org: 'org-1', sid: 'user-1', sub: scope.subscriberRecordId })).toString('base64url');
    await expect(verifySubscriberToken(deps, `${header}.${payload}.${signature}`)).rejects.toBeInstanceOf(UnauthorizedError);
    const unsigned = await new SignJWT({ typ: 'subscriber' }).setProtectedHeader({ alg: 'HS256' }).sign(new Uint8Array(32));
    await expect(verifySubscriberToken(deps, unsigned)).rejects.toBeInstanceOf(UnauthorizedError);
  });
});
