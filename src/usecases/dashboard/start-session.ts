import { isoNow } from '../../domain/clock.js';
import type { StoredUser, User } from '../../domain/dashboard.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { csrfTokenFor, hashOpaqueToken, newOpaqueToken } from './opaque-tokens.js';
import { presentUser } from './user-view.js';

export interface StartedSession {
  user: User;
  /** The cookie value; stored only as its hash. */
  sessionToken: string;
  csrfToken: string;
  expiresAt: string;
}

/** A new server-side session for `user`, lasting `config.dashboard.sessionTtlSeconds` from now. */
export async function startSession(
  deps: Pick<Deps, 'clock' | 'config' | 'sessionSecret'>,
  store: Store,
  user: StoredUser,
): Promise<StartedSession> {
  const sessionToken = newOpaqueToken();
  const createdAt = isoNow(deps.clock);
  const expiresAt = new Date(deps.clock.now() + deps.config.dashboard.sessionTtlSeconds * 1000).toISOString();
  await store.dashboard.createSession({ tokenHash: hashOpaqueToken(sessionToken), userId: user._id, createdAt, expiresAt });
  return { user: presentUser(user), sessionToken, csrfToken: csrfTokenFor(deps.sessionSecret, sessionToken), expiresAt };
}
