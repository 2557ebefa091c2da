import { UnauthorizedError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { ApiKeyRecord } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { hashApiKey } from './api-keys.js';
import { verifySessionToken } from './session-tokens.js';

/**
 * Resolves the Authorization header to a caller, with the exact 401 messages of API-CONVENTIONS.md.
 * Known key hashes are cached briefly so the hot trigger path does not hit the database per request; one cache
 * per store, so two Herald instances in one process (tests, embedding) never answer from each other's keys.
 */
const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;
type KeyCache = Map<string, { record: ApiKeyRecord; expiresAt: number }>;
const keyCaches = new WeakMap<object, KeyCache>();

function keyCacheOf(store: object): KeyCache {
  let cache = keyCaches.get(store);
  if (!cache) {
    cache = new Map();
    keyCaches.set(store, cache);
  }
  return cache;
}

export async function authenticateCaller(
  deps: Pick<Deps, 'store' | 'clock' | 'sessionSecret'>,
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
    return { kind: 'apiKey', environmentId: record.environmentId, organizationId: record.organizationId, actorId: record.id };
  }
  if (scheme === 'Bearer') {
    const session = await verifySessionToken(deps, credential);
    return { kind: 'session', environmentId: session.environmentId, organizationId: session.organizationId, actorId: session.subject };
  }
  throw new UnauthorizedError(`Invalid authentication scheme: "${scheme}"`);
}

async function findKey(deps: Pick<Deps, 'store' | 'clock'>, secretKey: string): Promise<ApiKeyRecord | undefined> {
  const hash = hashApiKey(secretKey);
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
