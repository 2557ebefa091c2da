import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import type { SubscriptionView } from './subscription-outcome.js';
import { requireTopic } from './topic-access.js';

export interface ListTopicSubscriptionsInput {
  caller: Caller;
  topicKey: string;
  /** Cursor: the `_id` of the last subscription of the previous page. */
  after?: string;
  limit: number;
  /** Only this subscriber's subscription (external id). */
  subscriberId?: string;
}

/** In creation order; `next` is the cursor of the following page, null on the last. */
export async function listTopicSubscriptions(
  deps: Deps,
  input: ListTopicSubscriptionsInput,
): Promise<{ data: SubscriptionView[]; next: string | null; totalCount: number }> {
  const { caller } = input;
  const topic = await requireTopic(deps, caller, input.topicKey);
  if (input.subscriberId !== undefined) {
    const [subscriber] = await deps.store.subscribers.findManyBySubscriberIds(caller.environmentId, [input.subscriberId]);
    const found = subscriber ? await deps.store.topics.findSubscriptions(caller.environmentId, topic._id, [subscriber._id]) : [];
    return { data: found.map((subscription) => ({ subscription, topic, subscriber })), next: null, totalCount: found.length };
  }
  const [page, totalCount] = await Promise.all([
    deps.store.topics.listSubscriptions(caller.environmentId, topic._id, {
      ...(input.after ? { afterId: input.after } : {}),
      limit: input.limit + 1,
    }),
    deps.store.topics.countSubscriptions(caller.environmentId, topic._id),
  ]);
  const items = page.slice(0, input.limit);
  const subscribers = await deps.store.subscribers.findManyBySubscriberIds(caller.environmentId, items.map((s) => s.subscriberId));
  const bySubscriberId = new Map(subscribers.map((subscriber) => [subscriber.subscriberId, subscriber]));
  return {
    data: items.map((subscription) => ({ subscription, topic, subscriber: bySubscriberId.get(subscription.subscriberId) })),
    next: page.length > input.limit ? items[items.length - 1]._id : null,
    totalCount,
  };
}
