import { ConflictError, NotFoundError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';

/** Deletes a user and ends their sessions. Never the organization's last admin (409). */
export async function deleteUser(
  deps: Pick<Deps, 'store'>,
  input: { caller: Caller; userId: string },
): Promise<{ acknowledged: true; status: 'deleted' }> {
  const organizationId = input.caller.organizationId;
  return deps.store.transaction(async (store) => {
    await store.lockKey(`dashboard-users:${organizationId}`);
    const user = isRecordId(input.userId) ? await store.dashboard.getUser(organizationId, input.userId) : undefined;
    if (!user) throw NotFoundError.entity('User', input.userId);
    if (user.role === 'admin' && (await store.dashboard.countAdmins(organizationId)) <= 1) {
      throw new ConflictError('The last admin cannot be deleted');
    }
    await store.dashboard.deleteUser(organizationId, user._id);
    return { acknowledged: true, status: 'deleted' };
  });
}
