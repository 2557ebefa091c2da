import { NotFoundError, ValidationError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { validateContextKeyFilter } from '../messages/context-key-filter.js';
import type { SubscriptionView } from './subscription-outcome.js';

export interface ListSubscriberSubscriptionsInput {
  caller: Caller;
  subscriberId: string;
  /** Cursor: the `_id` of the last subscription of the previous page (`next`). */
  after?: string;
  before?: string;
  limit: number;
  /** Only the subscription to this topic. */
  key?: string;
  /** Exact set; Herald's subscriptions have no context, so only an empty set matches them. */
  contextKeys?: string[];
  orderDirection?: 'ASC' | 'DESC';
}

/** GET /v2/subscribers/{subscriberId}/subscriptions: the topics a subscriber (of the caller's environment) is in. */
export async function listSubscriberSubscriptions(
  deps: Deps,
  input: ListSubscriberSubscriptionsInput,
): Promise<{ data: SubscriptionView[]; next: string | null; totalCount: number }> {
  const { caller } = input;
  if (input.before !== undefined) throw new ValidationError(['before is not supported: page forwards with after (the previous page\'s next)']);
  const contextKeys = validateContextKeyFilter(input.contextKeys);
  const subscriber = await deps.store.subscribers.findBySubscriberId(caller.environmentId, input.subscriberId);
  if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
  if (contextKeys !== undefined && contextKeys.length > 0) return { data: [], next: null, totalCount: 0 };
  const topicKey = input.key;
  const [rows, totalCount] = await Promise.all([
    deps.store.topics.listSubscriberSubscriptions(caller.environmentId, subscriber._id, {
      ...(input.after ? { afterId: input.after } : {}),
      limit: input.limit + 1,
      ...(topicKey !== undefined ? { topicKey } : {}),
      descending: input.orderDirection === 'DESC',
    }),
    deps.store.topics.countSubscriberSubscriptions(caller.environmentId, subscriber._id, topicKey !== undefined ? { topicKey } : {}),
  ]);
  const items = rows.slice(0, input.limit);
  return {
    data: items.map(({ subscription, topic }) => ({ subscription, topic, subscriber })),
    next: rows.length > input.limit ? items[items.length - 1].subscription._id : null,
    totalCount,
  };
}
