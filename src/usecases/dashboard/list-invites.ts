import type { Caller, UserRole } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface InviteView {
  _id: string;
  role: UserRole;
  email?: string;
  createdBy?: string;
  createdAt: string;
  expiresAt: string;
  expired: boolean;
}

/** Invites not yet accepted nor deleted, newest first. Their links cannot be shown again (only hashes are kept). */
export async function listInvites(deps: Pick<Deps, 'store' | 'clock'>, input: { caller: Caller }): Promise<InviteView[]> {
  const now = new Date(deps.clock.now()).toISOString();
  return (await deps.store.dashboard.listOpenInvites(input.caller.organizationId)).map((invite) => ({
    _id: invite._id,
    role: invite.role ?? 'viewer',
    ...(invite.email ? { email: invite.email } : {}),
    ...(invite.createdBy ? { createdBy: invite.createdBy } : {}),
    createdAt: invite.createdAt,
    expiresAt: invite.expiresAt,
    expired: invite.expiresAt <= now,
  }));
}
