import { createHmac } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
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

export async function verifySubscriberToken(deps: Pick<Deps, 'clock' | 'sessionSecret'>, token: string): Promise<SubscriberScope> {
  try {
    const { payload } = await jwtVerify(token, signingKey(deps.sessionSecret), {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['HS256'],
      currentDate: new Date(deps.clock.now()),
    });
    const { typ, env, org, sid, sub } = payload;
    if (typ !== SUBSCRIBER_TOKEN_TYPE || typeof env !== 'string' || typeof org !== 'string' || typeof sid !== 'string' || typeof sub !== 'string') {
      throw new Error('claims');
    }
    return { environmentId: env, organizationId: org, subscriberRecordId: sub, subscriberId: sid };
  } catch {
    throw new UnauthorizedError('Invalid or expired subscriber session token');
  }
}
