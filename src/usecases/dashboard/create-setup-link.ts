import { isoNow } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import type { Deps } from '../deps.js';
import { hashOpaqueToken, newOpaqueToken } from './opaque-tokens.js';

/**
 * At start-up, while no dashboard user exists: a one-time token for the setup link that creates the first admin
 * (stored hashed, expires after `config.dashboard.setupTokenTtlSeconds`, single use). Undefined once a user exists.
 * Every start makes a new one; earlier ones stay valid until they expire or the first admin exists.
 */
export async function createSetupLink(deps: Pick<Deps, 'store' | 'clock' | 'config'>): Promise<{ token: string; expiresAt: string } | undefined> {
  if ((await deps.store.dashboard.countUsers()) > 0) return undefined;
  const token = newOpaqueToken();
  const expiresAt = new Date(deps.clock.now() + deps.config.dashboard.setupTokenTtlSeconds * 1000).toISOString();
  await deps.store.dashboard.createToken({
    _id: newId(deps.clock.now()),
    tokenHash: hashOpaqueToken(token),
    kind: 'setup',
    role: 'admin',
    createdAt: isoNow(deps.clock),
    expiresAt,
  });
  return { token, expiresAt };
}

/** The link printed at start-up: relative to the address Herald listens on. */
export function setupLinkUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/$/, '')}/dashboard/setup?token=${encodeURIComponent(token)}`;
}
