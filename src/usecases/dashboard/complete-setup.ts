import { isoNow } from '../../domain/clock.js';
import { ConflictError, ValidationError } from '../../domain/errors.js';
import type { Deps } from '../deps.js';
import { createUser, newUserProblems } from './create-user.js';
import { hashOpaqueToken } from './opaque-tokens.js';
import { startSession, type StartedSession } from './start-session.js';

export interface CompleteSetupInput {
  token: string;
  email: string;
  password: string;
  name?: string;
}

/**
 * The setup link's form: creates the first admin and signs them in. Only while no user exists (409 after), and
 * the token is consumed in the same transaction, so it works once; concurrent attempts are serialized by a lock.
 */
export async function completeSetup(deps: Deps, input: CompleteSetupInput): Promise<StartedSession> {
  const problems = newUserProblems({ ...input, role: 'admin' });
  if (problems.length > 0) throw new ValidationError(problems);
  return deps.store.transaction(async (store) => {
    await store.lockKey('dashboard-setup');
    if ((await store.dashboard.countUsers()) > 0) throw new ConflictError('Herald is already set up; sign in instead');
    const token = await store.dashboard.consumeToken(hashOpaqueToken(input.token), 'setup', isoNow(deps.clock));
    if (!token) throw new ValidationError(['token is invalid, expired or already used']);
    const user = await createUser(deps, store, { email: input.email, password: input.password, name: input.name, role: 'admin' });
    return startSession(deps, store, user);
  });
}
