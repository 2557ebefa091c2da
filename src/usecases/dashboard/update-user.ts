import { isoNow } from '../../domain/clock.js';
import type { User } from '../../domain/dashboard.js';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller, UserRole } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { presentUser } from './user-view.js';

export interface UpdateUserInput {
  caller: Caller;
  userId: string;
  role?: UserRole;
  /** null or an empty string clears the name. */
  name?: string | null;
}

/** Changes a user's role or name. The organization always keeps one admin: demoting the last one is a 409. */
export async function updateUser(deps: Pick<Deps, 'store' | 'clock'>, input: UpdateUserInput): Promise<User> {
  const organizationId = input.caller.organizationId;
  return deps.store.transaction(async (store) => {
    await store.lockKey(`dashboard-users:${organizationId}`);
    const user = isRecordId(input.userId) ? await store.dashboard.getUser(organizationId, input.userId) : undefined;
    if (!user) throw NotFoundError.entity('User', input.userId);
    if (input.role === 'viewer' && user.role === 'admin' && (await store.dashboard.countAdmins(organizationId)) <= 1) {
      throw new ConflictError('The last admin cannot become a viewer');
    }
    const name = input.name === undefined ? undefined : input.name?.trim() || null;
    await store.dashboard.updateUser(organizationId, user._id, { role: input.role, name, updatedAt: isoNow(deps.clock) });
    return presentUser((await store.dashboard.getUser(organizationId, user._id))!);
  });
}
