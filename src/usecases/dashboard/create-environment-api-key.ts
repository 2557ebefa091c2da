import { isoNow } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { generateSecretKey, hashApiKey } from '../auth/api-keys.js';

/** A new secret key for the caller's environment. The key is returned once; only its hash and last four are kept. */
export async function createEnvironmentApiKey(
  deps: Pick<Deps, 'store' | 'clock'>,
  input: { caller: Caller },
): Promise<{ _id: string; secretKey: string }> {
  const secretKey = generateSecretKey();
  const id = newId(deps.clock.now());
  await deps.store.transaction(async (store) => {
    // With its encrypted copy, like every key made since migration 0010, so Inbox HMACs can be checked with it.
    await store.tenancy.createApiKey({ id, environmentId: input.caller.environmentId, keyHash: hashApiKey(secretKey), secretKey, createdAt: isoNow(deps.clock) });
    await store.dashboard.describeApiKey(id, { last4: secretKey.slice(-4), createdBy: input.caller.actorId });
  });
  return { _id: id, secretKey };
}
