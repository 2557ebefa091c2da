import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { loadConfig } from '../../../src/config.js';
import { UnauthorizedError } from '../../../src/domain/errors.js';
import { createSessionToken, verifySessionToken } from '../../../src/usecases/auth/session-tokens.js';
import {
  createSubscriberToken,
  recallSubscriberToken,
  REMEMBERED_SUBSCRIBER_TOKENS,
  verifySubscriberToken,
} from '../../../src/usecases/auth/subscriber-tokens.js';
import { authenticateCaller } from '../../../src/usecases/auth/authenticate-caller.js';
import { LocalKeyRevocations } from '../../../src/store/local-key-revocations.js';
import type { Deps } from '../../../src/usecases/deps.js';

const scope = { environmentId: 'env-1', organizationId: 'org-1', subscriberRecordId: 'a'.repeat(24), subscriberId: 'user-1' };

/** Verification also reads the subscriber record (a deleted subscriber's token is refused): here it always exists. */
const liveSubscribers = { subscribers: { get: async (environmentId: string, id: string) => ({ _id: id, environmentId }) } } as unknown as Deps['store'];

function depsAt(now: number, ttl = 3600, secret = new Uint8Array(32).fill(7)) {
  const config = loadConfig({ HERALD_INBOX_TOKEN_TTL_SECONDS: String(ttl) });
  return { config, clock: { now: () => now }, sessionSecret: secret, store: liveSubscribers } as Pick<Deps, 'config' | 'clock' | 'sessionSecret' | 'store'>;
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

describe('remembered subscriber tokens', () => {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const authDeps = (deps: ReturnType<typeof depsAt>) => ({ ...deps, keyRevocations: new LocalKeyRevocations() });

  it('recalls a token verified with remember while it is valid at the clock of each recall, and refuses it once expired', async () => {
    const secret = new Uint8Array(32).fill(11);
    const token = await createSubscriberToken(depsAt(start, 120, secret), scope);
    const at = (now: number) => depsAt(now, 120, secret);
    expect(recallSubscriberToken(at(start), token)).toBeUndefined();
    await verifySubscriberToken(at(start), token);
    expect(recallSubscriberToken(at(start), token), 'verified without remember').toBeUndefined();

    expect(await authenticateCaller(authDeps(at(start)), `Bearer ${token}`)).toMatchObject({ kind: 'subscriber', ...scope });
    expect(recallSubscriberToken(at(start + 119_000), token)).toEqual(scope);
    expect(recallSubscriberToken(at(start + 120_000), token)).toBeUndefined();
    await expect(authenticateCaller(authDeps(at(start + 120_000)), `Bearer ${token}`)).rejects.toBeInstanceOf(UnauthorizedError);
    // Forgotten once seen expired, even if the clock goes back.
    expect(recallSubscriberToken(at(start), token)).toBeUndefined();
  });

  it('checks not-before on every recall', async () => {
    const secret = new Uint8Array(32).fill(12);
    const seconds = Math.floor(start / 1000);
    const key = createHmac('sha256', secret).update('herald subscriber tokens v1').digest();
    const token = await new SignJWT({ typ: 'subscriber', env: scope.environmentId, org: scope.organizationId, sid: scope.subscriberId })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('herald')
      .setAudience('herald-inbox')
      .setSubject(scope.subscriberRecordId)
      .setNotBefore(seconds)
      .setExpirationTime(seconds + 600)
      .sign(key);
    await verifySubscriberToken(depsAt(start, 600, secret), token, { remember: true });
    expect(recallSubscriberToken(depsAt(start, 600, secret), token)).toEqual(scope);
    expect(recallSubscriberToken(depsAt(start - 1000, 600, secret), token)).toBeUndefined();
  });

  it('never takes an altered token, or a token remembered under another session secret, for a remembered one', async () => {
    const secret = new Uint8Array(32).fill(13);
    const deps = depsAt(start, 3600, secret);
    const token = await createSubscriberToken(deps, scope);
    await authenticateCaller(authDeps(deps), `Bearer ${token}`);
    expect(recallSubscriberToken(deps, token)).toEqual(scope);

    const [header, payload, signature] = token.split('.');
    const otherSubscriber = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')), sub: 'b'.repeat(24), sid: 'user-2' }),
    ).toString('base64url');
    const flipped = signature!.slice(0, -1) + (signature!.endsWith('A') ? 'B' : 'A');
    for (const altered of [`${header}.${otherSubscriber}.${signature}`, `${header}.${payload}.${flipped}`, `${token}.`]) {
      expect(recallSubscriberToken(deps, altered), altered).toBeUndefined();
      await expect(authenticateCaller(authDeps(deps), `Bearer ${altered}`), altered).rejects.toBeInstanceOf(UnauthorizedError);
    }
    expect(recallSubscriberToken(depsAt(start, 3600, new Uint8Array(32).fill(14)), token)).toBeUndefined();
    await expect(authenticateCaller(authDeps(depsAt(start, 3600, new Uint8Array(32).fill(14))), `Bearer ${token}`)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it(`remembers at most ${REMEMBERED_SUBSCRIBER_TOKENS} tokens per session secret, forgetting the oldest first`, async () => {
    const secret = new Uint8Array(32).fill(15);
    const deps = depsAt(start, 3600, secret);
    const tokens: string[] = [];
    for (let index = 0; index <= REMEMBERED_SUBSCRIBER_TOKENS; index++) {
      const token = await createSubscriberToken(deps, { ...scope, subscriberId: `user-${index}` });
      tokens.push(token);
      await verifySubscriberToken(deps, token, { remember: true });
    }
    expect(recallSubscriberToken(deps, tokens[0]!)).toBeUndefined();
    expect(recallSubscriberToken(deps, tokens[1]!)).toEqual({ ...scope, subscriberId: 'user-1' });
    expect(recallSubscriberToken(deps, tokens.at(-1)!)).toEqual({ ...scope, subscriberId: `user-${REMEMBERED_SUBSCRIBER_TOKENS}` });
    // The forgotten token still verifies: forgetting costs a verification, never an answer.
    expect(await verifySubscriberToken(deps, tokens[0]!)).toEqual({ ...scope, subscriberId: 'user-0' });
  });
});
