import type { User } from '../../domain/dashboard.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { presentUser } from './user-view.js';

/** The users of the caller's organization, oldest first. */
export async function listUsers(deps: Pick<Deps, 'store'>, input: { caller: Caller }): Promise<User[]> {
  return (await deps.store.dashboard.listUsers(input.caller.organizationId)).map(presentUser);
}
