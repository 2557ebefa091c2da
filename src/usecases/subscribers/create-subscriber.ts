import { isoNow } from '../../domain/clock.js';
import { ConflictError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { Caller, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { applyProfile, validateProfile, type SubscriberProfileInput } from './subscriber-profile.js';

export interface CreateSubscriberInput extends SubscriberProfileInput {
  caller: Caller;
  subscriberId: string;
  /** When true an existing subscriberId is a 409; otherwise the existing subscriber is updated (Novu's default). */
  failIfExists?: boolean;
}

/** Creates the subscriber, or updates the one with this subscriberId (absent fields unchanged). */
export async function createSubscriber(deps: Deps, input: CreateSubscriberInput): Promise<Subscriber> {
  return (await upsertSubscriber(deps, input)).subscriber;
}

/** `createSubscriber`, also telling whether the subscriber was created (true) or an existing one updated. */
export async function upsertSubscriber(deps: Deps, input: CreateSubscriberInput): Promise<{ subscriber: Subscriber; created: boolean }> {
  const { caller, subscriberId, failIfExists, ...profile } = input;
  validateProfile(profile);
  // A second attempt covers a concurrent create of the same subscriberId that won the insert.
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await deps.store.transaction(async (store) => {
        const now = isoNow(deps.clock);
        const existing = await store.subscribers.findBySubscriberId(caller.environmentId, subscriberId);
        if (existing) {
          if (failIfExists) throw new ConflictError(`Subscriber with subscriberId ${subscriberId} already exists`);
          const updated = applyProfile(existing, profile, now);
          await store.subscribers.save(updated);
          return { subscriber: updated, created: false };
        }
        const created: Subscriber = {
          _id: newId(deps.clock.now()),
          _organizationId: caller.organizationId,
          _environmentId: caller.environmentId,
          subscriberId,
          firstName: profile.firstName ?? null,
          lastName: profile.lastName ?? null,
          email: profile.email ?? null,
          phone: profile.phone ?? null,
          avatar: profile.avatar ?? null,
          locale: profile.locale ?? null,
          timezone: profile.timezone ?? null,
          data: profile.data ?? null,
          channels: [],
          topics: [],
          isOnline: null,
          lastOnlineAt: null,
          __v: 0,
          deleted: false,
          createdAt: now,
          updatedAt: now,
        };
        await store.subscribers.create(created);
        return { subscriber: created, created: true };
      });
      // An updated profile shows in its Inbox with every notification.
      if (!result.created) deps.realtime.subscriberChanged({ environmentId: caller.environmentId, subscriberRecordId: result.subscriber._id });
      return result;
    } catch (error) {
      if (error instanceof ConflictError && !failIfExists && attempt === 0) continue;
      throw error;
    }
  }
}
