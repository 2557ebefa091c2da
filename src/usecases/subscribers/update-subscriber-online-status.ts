import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface UpdateSubscriberOnlineStatusInput {
  caller: Caller;
  subscriberId: string;
  isOnline: boolean;
}

/** Sets `isOnline`; `lastOnlineAt` becomes now when the subscriber goes offline (it was online until now). */
export async function updateSubscriberOnlineStatus(deps: Deps, input: UpdateSubscriberOnlineStatusInput): Promise<Subscriber> {
  return deps.store.transaction(async (store) => {
    const existing = await store.subscribers.findBySubscriberId(input.caller.environmentId, input.subscriberId);
    if (!existing) throw NotFoundError.subscriber(input.subscriberId);
    const now = isoNow(deps.clock);
    const updated: Subscriber = { ...existing, isOnline: input.isOnline, __v: existing.__v + 1, updatedAt: now };
    if (!input.isOnline) updated.lastOnlineAt = now;
    await store.subscribers.save(updated);
    return updated;
  });
}
