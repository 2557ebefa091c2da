import { isoNow } from '../../domain/clock.js';
import { isPlausibleEmail, normalizeEmail } from '../../domain/dashboard.js';
import { ValidationError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { Caller, UserRole } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { hashOpaqueToken, newOpaqueToken } from './opaque-tokens.js';

export interface InviteCreated {
  _id: string;
  /** The link to hand over (no email is sent); relative to wherever the dashboard is opened. Shown once. */
  url: string;
  role: UserRole;
  email?: string;
  expiresAt: string;
}

/** An invite link into the caller's organization with a role; optionally only for one email address. */
export async function createInvite(
  deps: Pick<Deps, 'store' | 'clock' | 'config'>,
  input: { caller: Caller; role: UserRole; email?: string },
): Promise<InviteCreated> {
  const email = input.email === undefined ? undefined : normalizeEmail(input.email);
  if (email !== undefined && !isPlausibleEmail(email)) throw new ValidationError(['email must be an email address']);
  const token = newOpaqueToken();
  const id = newId(deps.clock.now());
  const expiresAt = new Date(deps.clock.now() + deps.config.dashboard.inviteTtlSeconds * 1000).toISOString();
  await deps.store.dashboard.createToken({
    _id: id,
    tokenHash: hashOpaqueToken(token),
    kind: 'invite',
    organizationId: input.caller.organizationId,
    role: input.role,
    ...(email ? { email } : {}),
    createdBy: input.caller.actorId,
    createdAt: isoNow(deps.clock),
    expiresAt,
  });
  return { _id: id, url: `/dashboard/invite?token=${token}`, role: input.role, ...(email ? { email } : {}), expiresAt };
}
