import { NotFoundError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import type { SubscriptionView } from './subscription-outcome.js';
import { requireTopic } from './topic-access.js';

export interface GetTopicSubscriptionInput {
  caller: Caller;
  topicKey: string;
  /** The subscription's identifier as Herald gives it: `<topicKey>:<subscriberId>`. */
  identifier: string;
}

/** GET /v2/topics/{topicKey}/subscriptions/{identifier}: one subscription of the caller environment's topic; 404 otherwise. */
export async function getTopicSubscription(deps: Deps, input: GetTopicSubscriptionInput): Promise<SubscriptionView> {
  const { caller } = input;
  const topic = await requireTopic(deps, caller, input.topicKey);
  const notFound = NotFoundError.entity('Subscription', input.identifier);
  const prefix = `${topic.key}:`;
  if (input.identifier.startsWith(prefix)) {
    const subscriberId = input.identifier.slice(prefix.length);
    const subscriber = await deps.store.subscribers.findBySubscriberId(caller.environmentId, subscriberId);
    const [subscription] = subscriber ? await deps.store.topics.findSubscriptions(caller.environmentId, topic._id, [subscriber._id]) : [];
    if (!subscription) throw notFound;
    return { subscription, topic, subscriber };
  }
  throw notFound;
}
