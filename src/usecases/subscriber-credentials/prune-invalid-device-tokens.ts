import { isoNow } from '../../domain/clock.js';
import type { Deps } from '../deps.js';
import { removeInvalidDeviceTokens } from './remove-invalid-device-tokens.js';

export interface PruneInvalidDeviceTokensInput {
  environmentId: string;
  /** The subscriber's internal `_id` (a message's `_subscriberId`). */
  subscriberInternalId: string;
  providerId: string;
  /** Tokens the vendor reported invalid. */
  tokens: string[];
}

/**
 * For the worker after a push send: reloads the subscriber in a transaction (a concurrent credentials
 * update is not overwritten with a stale copy), removes the invalid tokens and saves with `__v` and
 * `updatedAt` bumped. Returns the tokens removed; nothing is written when none was held, or the
 * subscriber is gone or deleted.
 */
export async function pruneInvalidDeviceTokens(deps: Deps, input: PruneInvalidDeviceTokensInput): Promise<string[]> {
  if (input.tokens.length === 0) return [];
  return deps.store.transaction(async (store) => {
    const subscriber = await store.subscribers.get(input.environmentId, input.subscriberInternalId);
    if (!subscriber || subscriber.deleted) return [];
    const { subscriber: pruned, removed } = removeInvalidDeviceTokens(subscriber, input.providerId, input.tokens);
    if (removed.length === 0) return [];
    await store.subscribers.save({ ...pruned, __v: subscriber.__v + 1, updatedAt: isoNow(deps.clock) });
    return removed;
  });
}
