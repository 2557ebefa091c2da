import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';

/**
 * Revokes a secret key of the caller's environment. It stops authenticating at once on every process: the revocation
 * is stored, then announced to every process's key cache before this returns (deps.keyRevocations).
 */
export async function revokeApiKey(
  deps: Pick<Deps, 'store' | 'clock' | 'keyRevocations'>,
  input: { caller: Caller; keyId: string },
): Promise<{ acknowledged: true; status: 'revoked' }> {
  const revoked = isRecordId(input.keyId) ? await deps.store.dashboard.revokeApiKey(input.caller.environmentId, input.keyId, isoNow(deps.clock)) : undefined;
  if (!revoked) throw NotFoundError.entity('API key', input.keyId);
  await deps.keyRevocations.publish(revoked.keyHash);
  return { acknowledged: true, status: 'revoked' };
}
