import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { distinct, subscriberNotFound, type SubscriptionFailure, type SubscriptionsOutcome } from './subscription-outcome.js';
import { requireTopic } from './topic-access.js';

export interface RemoveTopicSubscriptionsInput {
  caller: Caller;
  topicKey: string;
  /** External subscriberIds. */
  subscriberIds: string[];
}

/** Unsubscribes; unknown subscribers and subscribers not subscribed are reported in `errors`. */
export async function removeTopicSubscriptions(deps: Deps, input: RemoveTopicSubscriptionsInput): Promise<SubscriptionsOutcome> {
  const { caller } = input;
  const topic = await requireTopic(deps, caller, input.topicKey);
  const requested = distinct(input.subscriberIds);
  return deps.store.transaction(async (store) => {
    const subscribers = await store.subscribers.findManyBySubscriberIds(caller.environmentId, requested);
    const bySubscriberId = new Map(subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
    const existing = await store.topics.findSubscriptions(caller.environmentId, topic._id, subscribers.map((s) => s._id));
    await store.topics.removeSubscriptions(caller.environmentId, topic._id, existing.map((s) => s._subscriberId));
    const removed = new Set(existing.map((s) => s.subscriberId));
    const errors: SubscriptionFailure[] = requested.flatMap((subscriberId): SubscriptionFailure[] => {
      if (!bySubscriberId.has(subscriberId)) return [subscriberNotFound(subscriberId)];
      if (!removed.has(subscriberId)) {
        return [{ subscriberId, code: 'SUBSCRIPTION_NOT_FOUND', message: `Subscriber ${subscriberId} is not subscribed to topic ${topic.key}` }];
      }
      return [];
    });
    return {
      data: existing.map((subscription) => ({ subscription, topic, subscriber: bySubscriberId.get(subscription.subscriberId) })),
      meta: { totalCount: requested.length, successful: existing.length, failed: errors.length },
      errors,
    };
  });
}
