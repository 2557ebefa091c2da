import { createHmac, timingSafeEqual } from 'node:crypto';
import { SignJWT } from 'jose';
import { UnauthorizedError } from '../../domain/errors.js';
import type { Deps } from '../deps.js';

/**
 * Subscriber session tokens are what the Inbox clients hold (`POST /v1/inbox/session` answers one): an HS256 JWT
 * naming one subscriber of one environment, `typ: "subscriber"`. Signed with a key derived from the session secret
 * for this purpose only, so a subscriber token never verifies as a dashboard session token and the reverse.
 * Lifetime: `config.inbox.tokenTtlSeconds` (HERALD_INBOX_TOKEN_TTL_SECONDS, default 24 h); the clients never refresh
 * a token, so it must outlive the page.
 */
const ISSUER = 'herald';
const AUDIENCE = 'herald-inbox';
export const SUBSCRIBER_TOKEN_TYPE = 'subscriber';

export interface SubscriberScope {
  environmentId: string;
  organizationId: string;
  /** The subscriber record's `_id`. */
  subscriberRecordId: string;
  /** The subscriber's own `subscriberId`. */
  subscriberId: string;
}

type TokenDeps = Pick<Deps, 'clock' | 'sessionSecret' | 'config'>;

/**
 * How many verified tokens one signing secret remembers (recallSubscriberToken). An entry is the token and its scope,
 * well under 1 KB; past the bound the oldest entry is forgotten, so a busier process re-verifies some tokens.
 */
export const REMEMBERED_SUBSCRIBER_TOKENS = 10_000;

interface RememberedToken {
  scope: SubscriberScope;
  /** `exp` and `nbf`, in seconds: checked against the clock on every recall. */
  expiresAt: number;
  notBefore: number | undefined;
}

/** Per session secret: the derived signing key and the tokens verified with it (a new secret remembers nothing). */
interface SigningState {
  key: Uint8Array;
  remembered: Map<string, RememberedToken>;
  /**
   * Subscriber record ids deleted lately (announced through `deps.subscriberRevocations`), with when to forget them
   * (ms). They close the race of a verification that read the record just before its delete and remembers the
   * token just after the announcement dropped that subscriber's tokens.
   */
  deleted: Map<string, number>;
}

/** How long a deleted subscriber's id is kept against that race; verifications take milliseconds. */
const DELETED_MEMORY_MS = 10 * 60_000;
const DELETED_MAX = 100_000;

const signingStates = new WeakMap<Uint8Array, SigningState>();

function signingStateOf(sessionSecret: Uint8Array): SigningState {
  let state = signingStates.get(sessionSecret);
  if (!state) {
    state = { key: createHmac('sha256', sessionSecret).update('herald subscriber tokens v1').digest(), remembered: new Map(), deleted: new Map() };
    signingStates.set(sessionSecret, state);
  }
  return state;
}

function signingKey(sessionSecret: Uint8Array): Uint8Array {
  return signingStateOf(sessionSecret).key;
}

export async function createSubscriberToken(deps: TokenDeps, scope: SubscriberScope): Promise<string> {
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  return new SignJWT({ typ: SUBSCRIBER_TOKEN_TYPE, env: scope.environmentId, org: scope.organizationId, sid: scope.subscriberId })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(scope.subscriberRecordId)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(nowSeconds + deps.config.inbox.tokenTtlSeconds)
    .sign(signingKey(deps.sessionSecret));
}

/**
 * Checks a subscriber token: HS256 signature (node:crypto, synchronously), issuer, audience, expiry, not-before and the
 * claims this module writes. jose's `jwtVerify` goes through WebCrypto (a key import and a thread-pool job per call),
 * which was a fifth of the server's CPU on `GET /v1/inbox/notifications/count` in `npm run bench:inbox`. The checks
 * are jose's for these options; a token with a `crit` header is refused (none is understood), as jose does.
 * With `remember`, an accepted token is kept for recallSubscriberToken: the HTTP routes pass it (an Inbox client sends
 * the same token with every request), the socket server does not (a socket verifies once and keeps its scope).
 */
export async function verifySubscriberToken(
  deps: Pick<Deps, 'clock' | 'sessionSecret' | 'store'>,
  token: string,
  options: { remember?: boolean } = {},
): Promise<SubscriberScope> {
  const state = signingStateOf(deps.sessionSecret);
  const verified = checkSubscriberToken(state.key, token, Math.floor(deps.clock.now() / 1000));
  if (!verified) throw new UnauthorizedError('Invalid or expired subscriber session token');
  // A token names the subscriber record (`sub` = its `_id`), not the subscriberId: once that record is deleted the
  // token is dead, and a subscriber created again with the same subscriberId (a new `_id`) does not revive it.
  const { environmentId, subscriberRecordId } = verified.scope;
  if (wasDeleted(state, subscriberRecordId, deps.clock.now()) || !(await deps.store.subscribers.get(environmentId, subscriberRecordId))) {
    throw new UnauthorizedError('Invalid or expired subscriber session token');
  }
  if (options.remember && !state.remembered.has(token) && !wasDeleted(state, subscriberRecordId, deps.clock.now())) {
    if (state.remembered.size >= REMEMBERED_SUBSCRIBER_TOKENS) state.remembered.delete(state.remembered.keys().next().value!);
    state.remembered.set(token, verified);
  }
  return verified.scope;
}

/**
 * The scope of a token verified before with `remember` under this session secret, while the clock is within its
 * expiry and not-before; undefined otherwise (an unknown, altered, expired or not yet valid token: verify it, which
 * refuses what must be refused). Subscriber tokens are invalidated only by their expiry or by another session secret,
 * and both are checked here. Keyed by the exact token text, so only the same token is recalled: an altered one is
 * another key.
 */
export function recallSubscriberToken(deps: Pick<Deps, 'clock' | 'sessionSecret'>, token: string): SubscriberScope | undefined {
  const remembered = signingStateOf(deps.sessionSecret).remembered;
  const entry = remembered.get(token);
  if (!entry) return undefined;
  // No need to check deletions here: forgetSubscriberTokens drops a deleted subscriber's tokens from this map.
  const nowSeconds = Math.floor(deps.clock.now() / 1000);
  if (entry.expiresAt <= nowSeconds || (entry.notBefore !== undefined && entry.notBefore > nowSeconds)) {
    remembered.delete(token);
    return undefined;
  }
  return entry.scope;
}

function wasDeleted(state: SigningState, subscriberRecordId: string, nowMs: number): boolean {
  const until = state.deleted.get(subscriberRecordId);
  if (until === undefined) return false;
  if (until > nowMs) return true;
  state.deleted.delete(subscriberRecordId);
  return false;
}

/**
 * A deleted subscriber's tokens stop working in this process at once: their remembered entries go (the next request
 * verifies again, which reads the record and refuses). `subscriberRecordId` undefined: forget every remembered token
 * (this process may have missed announcements). Called for each announcement of `deps.subscriberRevocations`.
 */
export function forgetSubscriberTokens(deps: Pick<Deps, 'clock' | 'sessionSecret'>, subscriberRecordId: string | undefined): void {
  const state = signingStateOf(deps.sessionSecret);
  if (subscriberRecordId === undefined) {
    state.remembered.clear();
    return;
  }
  if (state.deleted.size >= DELETED_MAX) state.deleted.delete(state.deleted.keys().next().value!);
  state.deleted.set(subscriberRecordId, deps.clock.now() + DELETED_MEMORY_MS);
  for (const [token, entry] of state.remembered) if (entry.scope.subscriberRecordId === subscriberRecordId) state.remembered.delete(token);
}

/** What a subscriber deletion announces to every process: `<environmentId>:<subscriberRecordId>` (ids hold no colon). */
export function subscriberRevocationOf(environmentId: string, subscriberRecordId: string): string {
  return `${environmentId}:${subscriberRecordId}`;
}

export function parseSubscriberRevocation(message: string): { environmentId: string; subscriberRecordId: string } | undefined {
  const colon = message.lastIndexOf(':');
  if (colon <= 0 || colon === message.length - 1) return undefined;
  return { environmentId: message.slice(0, colon), subscriberRecordId: message.slice(colon + 1) };
}

function checkSubscriberToken(key: Uint8Array, token: string, nowSeconds: number): RememberedToken | undefined {
  const firstDot = token.indexOf('.');
  const secondDot = token.indexOf('.', firstDot + 1);
  if (firstDot <= 0 || secondDot <= firstDot + 1 || token.indexOf('.', secondDot + 1) !== -1) return undefined;
  const signature = decodeBase64Url(token.slice(secondDot + 1));
  if (!signature || signature.length !== 32) return undefined;
  const expected = createHmac('sha256', key).update(token.slice(0, secondDot)).digest();
  if (!timingSafeEqual(signature, expected)) return undefined;
  const header = parseJsonObject(token.slice(0, firstDot));
  if (!header || header.alg !== 'HS256' || header.crit !== undefined || header.b64 !== undefined) return undefined;
  const payload = parseJsonObject(token.slice(firstDot + 1, secondDot));
  if (!payload) return undefined;
  const { typ, env, org, sid, sub, iss, aud, exp, nbf, iat } = payload;
  if (iss !== ISSUER) return undefined;
  if (!(aud === AUDIENCE || (Array.isArray(aud) && aud.includes(AUDIENCE)))) return undefined;
  if (typeof exp !== 'number' || exp <= nowSeconds) return undefined;
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > nowSeconds)) return undefined;
  if (iat !== undefined && typeof iat !== 'number') return undefined;
  if (typ !== SUBSCRIBER_TOKEN_TYPE || typeof env !== 'string' || typeof org !== 'string' || typeof sid !== 'string' || typeof sub !== 'string') {
    return undefined;
  }
  return { scope: { environmentId: env, organizationId: org, subscriberRecordId: sub, subscriberId: sid }, expiresAt: exp, notBefore: nbf };
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

function decodeBase64Url(text: string): Buffer | undefined {
  // Buffer.from skips characters outside the alphabet; a token must not carry any.
  return BASE64URL.test(text) ? Buffer.from(text, 'base64url') : undefined;
}

function parseJsonObject(segment: string): Record<string, unknown> | undefined {
  const bytes = decodeBase64Url(segment);
  if (!bytes) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
