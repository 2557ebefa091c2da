import { RateLimitedError, UnauthorizedError } from '../../domain/errors.js';
import { normalizeEmail } from '../../domain/dashboard.js';
import { currentWindow } from '../requests/check-rate-limit.js';
import type { Deps } from '../deps.js';
import { hashOpaqueToken } from './opaque-tokens.js';
import { verifyAgainstDecoy, verifyPassword } from './passwords.js';
import { startSession, type StartedSession } from './start-session.js';

export interface SignInInput {
  email: string;
  password: string;
  /** The client's address, for the per-IP attempt limit. */
  ip: string;
}

/** One message for an unknown email and a wrong password, so sign-in does not reveal who has an account. */
export const SIGN_IN_REFUSED = 'Invalid email or password';

/**
 * Email and password → a new session. Every attempt counts against two fixed windows of
 * `loginWindowSeconds`, one per email and one per client IP (stored in the database, shared by every process);
 * over either limit the attempt is refused with 429 before the password is checked. A successful sign-in clears
 * the email's counter (not the IP's: one valid account must not reset the limit for guessing others).
 */
export async function signIn(deps: Deps, input: SignInInput): Promise<StartedSession> {
  const email = normalizeEmail(input.email);
  const settings = deps.config.dashboard;
  const { windowStart, resetSeconds } = currentWindow(deps.clock.now(), settings.loginWindowSeconds);
  // Keyed by hashes: the attempts table never holds the addresses themselves.
  const emailKey = `email:${hashOpaqueToken(email)}`;
  const ipKey = `ip:${hashOpaqueToken(input.ip)}`;
  const [emailCount, ipCount] = await Promise.all([
    deps.store.dashboard.countLoginAttempt(emailKey, windowStart),
    deps.store.dashboard.countLoginAttempt(ipKey, windowStart),
  ]);
  if (emailCount > settings.loginMaxAttemptsPerEmail || ipCount > settings.loginMaxAttemptsPerIp) {
    throw new RateLimitedError(resetSeconds, 'Too many sign-in attempts, try again later');
  }

  const user = await deps.store.dashboard.findUserByEmail(email);
  const valid = user ? await verifyPassword(input.password, user.passwordHash) : await verifyAgainstDecoy(input.password);
  if (!user || !valid) throw new UnauthorizedError(SIGN_IN_REFUSED);
  await deps.store.dashboard.clearLoginAttempts(emailKey);
  return startSession(deps, deps.store, user);
}
