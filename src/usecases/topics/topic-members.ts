import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Topic, TopicSubscription } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { requireTopic } from './topic-access.js';

/** A topic with the subscriberIds of all its subscribers (Novu v1's TopicDto lists them). */
export interface TopicWithMembers {
  topic: Topic;
  subscriberIds: string[];
}

const PAGE = 1000;

/** Each topic with its subscribers' external ids, in subscription order. */
export async function withMembers(deps: Deps, caller: Caller, topics: Topic[]): Promise<TopicWithMembers[]> {
  return Promise.all(
    topics.map(async (topic) => {
      const subscriberIds: string[] = [];
      for (let afterId: string | undefined; ; ) {
        const page = await deps.store.topics.listSubscriptions(caller.environmentId, topic._id, { ...(afterId ? { afterId } : {}), limit: PAGE });
        subscriberIds.push(...page.map((subscription) => subscription.subscriberId));
        if (page.length < PAGE) return { topic, subscriberIds };
        afterId = page[page.length - 1]!._id;
      }
    }),
  );
}

/** The caller environment's topic with this key and its members; 404 otherwise. */
export async function getTopicWithMembers(deps: Deps, input: { caller: Caller; topicKey: string }): Promise<TopicWithMembers> {
  const [found] = await withMembers(deps, input.caller, [await requireTopic(deps, input.caller, input.topicKey)]);
  return found!;
}

/** The subscription of one subscriber (external id) to the topic; 404 when the topic, subscriber or membership is absent. */
export async function getTopicMembership(
  deps: Deps,
  input: { caller: Caller; topicKey: string; subscriberId: string },
): Promise<TopicSubscription> {
  const topic = await requireTopic(deps, input.caller, input.topicKey);
  const subscriber = await deps.store.subscribers.findBySubscriberId(input.caller.environmentId, input.subscriberId);
  if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
  const [subscription] = await deps.store.topics.findSubscriptions(input.caller.environmentId, topic._id, [subscriber._id]);
  if (!subscription) throw new NotFoundError(`Subscriber ${input.subscriberId} is not subscribed to topic ${input.topicKey}`);
  return subscription;
}
