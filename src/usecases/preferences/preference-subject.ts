import { NotFoundError } from '../../domain/errors.js';
import type { Subscriber } from '../../domain/types.js';
import type { Store } from '../../store/ports.js';

/**
 * Whose preferences: an environment and a subscriber, given as the record the caller already holds (an Inbox
 * session) or as its external subscriberId (the server API). Nothing here is HTTP-specific.
 */
export type PreferenceSubject = { environmentId: string } & ({ subscriber: Subscriber } | { subscriberId: string });

/** The subscriber of `subject` in its environment; a subscriber of another environment is a NotFoundError. */
export async function subscriberOf(store: Store, subject: PreferenceSubject): Promise<Subscriber> {
  if ('subscriber' in subject) {
    if (subject.subscriber._environmentId !== subject.environmentId || subject.subscriber.deleted) throw NotFoundError.subscriber(subject.subscriber.subscriberId);
    return subject.subscriber;
  }
  const subscriber = await store.subscribers.findBySubscriberId(subject.environmentId, subject.subscriberId);
  if (!subscriber) throw NotFoundError.subscriber(subject.subscriberId);
  return subscriber;
}
