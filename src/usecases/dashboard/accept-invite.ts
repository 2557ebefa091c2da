import { isoNow } from '../../domain/clock.js';
import { normalizeEmail } from '../../domain/dashboard.js';
import { ValidationError } from '../../domain/errors.js';
import type { Deps } from '../deps.js';
import { createUser, newUserProblems } from './create-user.js';
import { hashOpaqueToken } from './opaque-tokens.js';
import { startSession, type StartedSession } from './start-session.js';

export interface AcceptInviteInput {
  token: string;
  email: string;
  password: string;
  name?: string;
}

/**
 * An invite link's form: creates the user with the invite's role in its organization and signs them in. The token
 * is consumed in the same transaction, so a failure (taken email, another address than the invited one) leaves
 * the invite usable, and a success makes it unusable.
 */
export async function acceptInvite(deps: Deps, input: AcceptInviteInput): Promise<StartedSession> {
  const problems = newUserProblems({ ...input, role: 'viewer' });
  if (problems.length > 0) throw new ValidationError(problems);
  return deps.store.transaction(async (store) => {
    const invite = await store.dashboard.consumeToken(hashOpaqueToken(input.token), 'invite', isoNow(deps.clock));
    if (!invite || !invite.organizationId) throw new ValidationError(['token is invalid, expired or already used']);
    if (invite.email && invite.email !== normalizeEmail(input.email)) throw new ValidationError(['email must be the address the invite was made for']);
    const user = await createUser(deps, store, {
      email: input.email,
      password: input.password,
      name: input.name,
      role: invite.role ?? 'viewer',
      organizationId: invite.organizationId,
    });
    return startSession(deps, store, user);
  });
}
