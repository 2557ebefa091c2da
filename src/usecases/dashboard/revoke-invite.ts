import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';

/** Deletes an open invite: its link stops working. */
export async function revokeInvite(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { caller: Caller; inviteId: string },
): Promise<{ acknowledged: true; status: 'deleted' }> {
  const revoked = isRecordId(input.inviteId) && (await deps.store.dashboard.revokeInvite(input.caller.organizationId, input.inviteId, isoNow(deps.clock)));
  if (!revoked) throw NotFoundError.entity('Invite', input.inviteId);
  return { acknowledged: true, status: 'deleted' };
}
