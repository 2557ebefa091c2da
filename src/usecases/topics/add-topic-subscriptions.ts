import { isoNow } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { distinct, subscriberNotFound, type SubscriptionsOutcome } from './subscription-outcome.js';
import { upsertTopic } from './upsert-topic.js';

export interface AddTopicSubscriptionsInput {
  caller: Caller;
  topicKey: string;
  /** External subscriberIds. */
  subscriberIds: string[];
  /** Name for the topic when this call creates it. */
  name?: string;
}

/**
 * Subscribes existing subscribers to the topic, creating the topic when absent (as Novu does). Unknown
 * subscriberIds are reported in `errors`, not failed as a whole; an existing subscription counts as successful.
 */
export async function addTopicSubscriptions(deps: Deps, input: AddTopicSubscriptionsInput): Promise<SubscriptionsOutcome> {
  const { caller } = input;
  const requested = distinct(input.subscriberIds);
  return deps.store.transaction(async (store) => {
    const scoped = { ...deps, store };
    const { topic } = await upsertTopic(scoped, { caller, key: input.topicKey, ...(input.name !== undefined ? { name: input.name } : {}) });
    const subscribers = await store.subscribers.findManyBySubscriberIds(caller.environmentId, requested);
    const bySubscriberId = new Map(subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
    const now = isoNow(deps.clock);
    const found = requested.flatMap((subscriberId) => bySubscriberId.get(subscriberId) ?? []);
    const subscriptions = await store.topics.addSubscriptions(
      found.map((subscriber) => ({
        _id: newId(deps.clock.now()),
        _environmentId: caller.environmentId,
        _topicId: topic._id,
        topicKey: topic.key,
        _subscriberId: subscriber._id,
        subscriberId: subscriber.subscriberId,
        createdAt: now,
      })),
    );
    const errors = requested.filter((subscriberId) => !bySubscriberId.has(subscriberId)).map(subscriberNotFound);
    return {
      data: subscriptions.map((subscription) => ({ subscription, topic, subscriber: bySubscriberId.get(subscription.subscriberId) })),
      meta: { totalCount: requested.length, successful: subscriptions.length, failed: errors.length },
      errors,
    };
  });
}
