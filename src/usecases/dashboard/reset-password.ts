import { randomBytes } from 'node:crypto';
import { isoNow } from '../../domain/clock.js';
import { normalizeEmail, passwordProblems } from '../../domain/dashboard.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import type { Deps } from '../deps.js';
import { hashPassword } from './passwords.js';

/**
 * Sets a user's password (the CLI's `users reset-password`): the given one, or a new random one that is returned
 * to be shown once. Every session of the user ends, so whoever held the old password is signed out.
 */
export async function resetPassword(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { email: string; password?: string },
): Promise<{ email: string; password: string }> {
  const password = input.password ?? randomBytes(12).toString('base64url');
  const problems = passwordProblems(password);
  if (problems.length > 0) throw new ValidationError(problems);
  const email = normalizeEmail(input.email);
  const user = await deps.store.dashboard.findUserByEmail(email);
  if (!user) throw new NotFoundError(`No user with email ${email}`);
  await deps.store.dashboard.updateUser(user._organizationId, user._id, { passwordHash: await hashPassword(password), updatedAt: isoNow(deps.clock) });
  await deps.store.dashboard.deleteSessionsOfUser(user._id);
  return { email, password };
}
