import type { Subscriber, Topic, TopicSubscription } from '../../domain/types.js';

/** A subscription with the topic and subscriber it joins, as the routes present it. */
export interface SubscriptionView {
  subscription: TopicSubscription;
  topic: Topic;
  subscriber: Subscriber | undefined;
}

export interface SubscriptionFailure {
  subscriberId: string;
  code: 'SUBSCRIBER_NOT_FOUND' | 'SUBSCRIPTION_NOT_FOUND';
  message: string;
}

export interface SubscriptionsOutcome {
  data: SubscriptionView[];
  meta: { totalCount: number; successful: number; failed: number };
  errors: SubscriptionFailure[];
}

export function subscriberNotFound(subscriberId: string): SubscriptionFailure {
  return { subscriberId, code: 'SUBSCRIBER_NOT_FOUND', message: `Subscriber with id ${subscriberId} not found` };
}

/** Distinct ids in first-seen order. */
export function distinct(ids: string[]): string[] {
  return [...new Set(ids)];
}
