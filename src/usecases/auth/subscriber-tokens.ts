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

const derivedKeys = new WeakMap<Uint8Array, Uint8Array>();

function signingKey(sessionSecret: Uint8Array): Uint8Array {
  let key = derivedKeys.get(sessionSecret);
  if (!key) {
    key = createHmac('sha256', sessionSecret).update('herald subscriber tokens v1').digest();
    derivedKeys.set(sessionSecret, key);
  }
  return key;
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
 * claims this module writes. Every Inbox request does this; jose's `jwtVerify` goes through WebCrypto (a key import
 * and a thread-pool job per call), which was a fifth of the server's CPU on `GET /v1/inbox/notifications/count` in
 * `npm run bench:inbox`. The checks are jose's for these options; a token with a `crit` header is refused (none is
 * understood), as jose does.
 */
export async function verifySubscriberToken(deps: Pick<Deps, 'clock' | 'sessionSecret'>, token: string): Promise<SubscriberScope> {
  const scope = checkSubscriberToken(signingKey(deps.sessionSecret), token, Math.floor(deps.clock.now() / 1000));
  if (!scope) throw new UnauthorizedError('Invalid or expired subscriber session token');
  return scope;
}

function checkSubscriberToken(key: Uint8Array, token: string, nowSeconds: number): SubscriberScope | undefined {
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
  return { environmentId: env, organizationId: org, subscriberRecordId: sub, subscriberId: sid };
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
