import { createHmac } from 'node:crypto';
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

  it('refuses what jose would refuse: another algorithm, another issuer or audience, not yet valid, no expiry, a crit header, a malformed token', async () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const deps = depsAt(now);
    const seconds = Math.floor(now / 1000);
    const key = createHmac('sha256', deps.sessionSecret).update('herald subscriber tokens v1').digest();
    const claims = { typ: 'subscriber', env: 'env-1', org: 'org-1', sid: 'user-1' };
    const sign = (build: (jwt: SignJWT) => SignJWT, header: Record<string, unknown> = { alg: 'HS256' }) =>
      build(new SignJWT(claims).setProtectedHeader(header as { alg: string }).setSubject(scope.subscriberRecordId)).sign(key);
    const full = (jwt: SignJWT) => jwt.setIssuer('herald').setAudience('herald-inbox').setIssuedAt(seconds).setExpirationTime(seconds + 60);
    // The same key and claims verify: the refusals below come from the one thing each changes.
    await expect(verifySubscriberToken(deps, await sign(full))).resolves.toEqual(scope);
    await expect(verifySubscriberToken(deps, await sign((jwt) => full(jwt).setAudience(['other', 'herald-inbox'])))).resolves.toEqual(scope);

    const refused = [
      await sign(full, { alg: 'HS512' }),
      await sign((jwt) => full(jwt).setIssuer('someone-else')),
      await sign((jwt) => full(jwt).setAudience('herald-dashboard')),
      await sign((jwt) => full(jwt).setNotBefore(seconds + 30)),
      await sign((jwt) => jwt.setIssuer('herald').setAudience('herald-inbox').setIssuedAt(seconds)),
      await sign((jwt) => full(jwt).setExpirationTime(seconds)),
    ];
    // jose will not sign a crit header: signed by hand, with the right key and otherwise valid claims.
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const critSigned = `${encode({ alg: 'HS256', crit: ['exp'], exp: true })}.${encode({ ...claims, sub: scope.subscriberRecordId, iss: 'herald', aud: 'herald-inbox', exp: seconds + 60 })}`;
    refused.push(`${critSigned}.${createHmac('sha256', key).update(critSigned).digest('base64url')}`);
    const valid = await sign(full);
    const [header, payload, signature] = valid.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`;
    refused.push(none, `${header}.${payload}`, `${valid}.extra`, `${header}.${payload}.${signature}!`, `${header}.${payload}.${signature!.slice(0, -2)}`, '', 'not a token');
    for (const token of refused) await expect(verifySubscriberToken(deps, token), token).rejects.toBeInstanceOf(UnauthorizedError);
  });
});
