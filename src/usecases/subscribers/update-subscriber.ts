import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { applyProfile, validateProfile, type SubscriberProfileInput } from './subscriber-profile.js';

export interface UpdateSubscriberInput extends SubscriberProfileInput {
  caller: Caller;
  subscriberId: string;
}

/** PATCH: absent fields unchanged, null clears; bumps `__v` and `updatedAt`. */
export async function updateSubscriber(deps: Deps, input: UpdateSubscriberInput): Promise<Subscriber> {
  const { caller, subscriberId, ...profile } = input;
  validateProfile(profile);
  const updated = await deps.store.transaction(async (store) => {
    const existing = await store.subscribers.findBySubscriberId(caller.environmentId, subscriberId);
    if (!existing) throw NotFoundError.subscriber(subscriberId);
    const next = applyProfile(existing, profile, isoNow(deps.clock));
    await store.subscribers.save(next);
    return next;
  });
  // Its Inbox shows the profile with every notification.
  deps.realtime.subscriberChanged({ environmentId: caller.environmentId, subscriberRecordId: updated._id });
  return updated;
}
