import { UnauthorizedError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { ApiKeyRecord } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { hashApiKey } from './api-keys.js';
import { decodeJwt } from 'jose';
import { verifySessionToken } from './session-tokens.js';
import { recallSubscriberToken, SUBSCRIBER_TOKEN_TYPE, verifySubscriberToken, type SubscriberScope } from './subscriber-tokens.js';

/**
 * Resolves the Authorization header to a caller, with the exact 401 messages of API-CONVENTIONS.md.
 * Known key hashes are cached briefly so the hot trigger path does not hit the database per request (in scale-out a
 * lookup is a PostgreSQL round trip, about as much CPU as a tenth of a trigger); one cache per store, so two Herald
 * instances in one process (tests, embedding) never answer from each other's keys. A revoked key leaves every
 * process's cache at once through `deps.keyRevocations` (wired in container.ts to `forgetCachedApiKey`), and the
 * cache is not used while this process might miss such an announcement.
 */
const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;
interface CachedKey {
  record: ApiKeyRecord;
  expiresAt: number;
}
/**
 * Keyed by the key's SHA-256 only: the secrets themselves are never kept in memory beyond their request (a cache by
 * secret would save the hash, ~2-6 µs a request, and put every live secret in a heap dump). A revocation edits this map.
 */
type KeyCache = Map<string, CachedKey>;
const keyCaches = new WeakMap<object, KeyCache>();

function keyCacheOf(store: object): KeyCache {
  let cache = keyCaches.get(store);
  if (!cache) {
    cache = new Map();
    keyCaches.set(store, cache);
  }
  return cache;
}

/** Drops one key (by hash) from the store's cache, or every key when `keyHash` is undefined. */
export function forgetCachedApiKey(store: object, keyHash: string | undefined): void {
  const cache = keyCaches.get(store);
  if (!cache) return;
  if (keyHash === undefined) cache.clear();
  else cache.delete(keyHash);
}

/**
 * The caller of an `ApiKey` header whose key this process has cached and may trust now, without a promise; undefined
 * when the request must go through authenticateCaller (another scheme, a key not cached or expired, revocations not
 * heard). The same cache under the same conditions as authenticateCaller's, which fills it.
 */
export function recallApiKeyCaller(deps: Pick<Deps, 'store' | 'clock' | 'keyRevocations'>, authorization: string | undefined): Caller | undefined {
  if (authorization === undefined || !authorization.startsWith('ApiKey ') || !deps.keyRevocations.listening) return undefined;
  const cache = keyCaches.get(deps.store);
  if (!cache || cache.size === 0) return undefined;
  const secretKey = authorization.slice(7).trim();
  if (!secretKey) return undefined;
  const cached = cache.get(hashApiKey(secretKey));
  if (!cached || cached.expiresAt <= deps.clock.now()) return undefined;
  return apiKeyCaller(cached.record);
}

function apiKeyCaller(record: ApiKeyRecord): Caller {
  return { kind: 'apiKey', environmentId: record.environmentId, organizationId: record.organizationId, actorId: record.id };
}

export async function authenticateCaller(
  deps: Pick<Deps, 'store' | 'clock' | 'sessionSecret' | 'keyRevocations'> & Partial<Pick<Deps, 'subscriberRevocations'>>,
  authorization: string | undefined,
): Promise<Caller> {
  if (!authorization || authorization.trim() === '') throw new UnauthorizedError('Missing authorization header');
  const space = authorization.indexOf(' ');
  const scheme = space === -1 ? authorization : authorization.slice(0, space);
  const credential = space === -1 ? '' : authorization.slice(space + 1).trim();

  if (scheme === 'ApiKey') {
    if (!credential) throw new UnauthorizedError('API Key not found');
    const record = await findKey(deps, credential);
    if (!record) throw new UnauthorizedError('API Key not found');
    return apiKeyCaller(record);
  }
  if (scheme === 'Bearer') {
    // An Inbox client sends the same subscriber token with every request: one verified before is recalled.
    // Not while this process might miss a subscriber deletion's announcement: then every request verifies.
    const remembered = deps.subscriberRevocations?.listening === false ? undefined : recallSubscriberToken(deps, credential);
    if (remembered) return subscriberCaller(remembered);
    // Subscriber (Inbox) and dashboard tokens are told apart by their typ claim; each is then verified with its own key.
    if (tokenType(credential) === SUBSCRIBER_TOKEN_TYPE) return subscriberCaller(await verifySubscriberToken(deps, credential, { remember: true }));
    const session = await verifySessionToken(deps, credential);
    return { kind: 'session', environmentId: session.environmentId, organizationId: session.organizationId, actorId: session.subject };
  }
  throw new UnauthorizedError(`Invalid authentication scheme: "${scheme}"`);
}

function subscriberCaller(scope: SubscriberScope): Caller {
  return { kind: 'subscriber', ...scope, actorId: scope.subscriberRecordId };
}

function tokenType(token: string): unknown {
  try {
    return decodeJwt(token).typ;
  } catch {
    return undefined;
  }
}

async function findKey(deps: Pick<Deps, 'store' | 'clock' | 'keyRevocations'>, secretKey: string): Promise<ApiKeyRecord | undefined> {
  const hash = hashApiKey(secretKey);
  if (!deps.keyRevocations.listening) return deps.store.tenancy.findApiKeyByHash(hash);
  const now = deps.clock.now();
  const keyCache = keyCacheOf(deps.store);
  const cached = keyCache.get(hash);
  if (cached && cached.expiresAt > now) return cached.record;
  const record = await deps.store.tenancy.findApiKeyByHash(hash);
  if (record) {
    if (keyCache.size >= CACHE_MAX) keyCache.clear();
    keyCache.set(hash, { record, expiresAt: now + CACHE_TTL_MS });
  }
  return record;
}
