import type { StoredUser, User } from '../../domain/dashboard.js';

/** A user as routes return it: everything but the password hash. */
export function presentUser(user: StoredUser): User {
  const { passwordHash: _passwordHash, ...rest } = user;
  return rest;
}
