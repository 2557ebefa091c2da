import { Type, type Static } from '@sinclair/typebox';
import type { Subscriber, Topic } from '../../domain/types.js';
import type { SubscriptionView } from '../../usecases/topics/subscription-outcome.js';
import { IsoDateTime } from './common.js';

/**
 * `/v2/topics` in Novu's shapes (`@novu/api`: CreateUpdateTopicRequestDto, UpdateTopicRequestDto, TopicResponseDto,
 * ListTopicsResponseDto, CreateTopicSubscriptionsRequestDto, CreateSubscriptionsResponseDto,
 * DeleteTopicSubscriptionsResponseDto, ListTopicSubscriptionsResponseDto). Lists are Novu's cursor pages
 * `{ data, next, previous, totalCount, totalCountCapped }`.
 */

export const TopicKey = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(?:[A-Za-z0-9_:-]+|[^\\s@]+@[^\\s@]+\\.[^\\s@]+)$',
  description: 'Letters, digits, -, _ and :, or an email address',
});
export const TopicName = Type.String({ minLength: 1, maxLength: 200 });

export const TopicParams = Type.Object({ topicKey: Type.String() });

export const UpsertTopicBody = Type.Object({ key: TopicKey, name: Type.Optional(TopicName) });
export const UpsertTopicQuery = Type.Object({ failIfExists: Type.Optional(Type.Boolean()) });
export const UpdateTopicBody = Type.Object({ name: Type.Optional(TopicName) });

export const ListTopicsQuery = Type.Object({
  key: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  after: Type.Optional(Type.String({ pattern: '^\\d+$', description: 'Cursor from a previous page (`next`)' })),
  before: Type.Optional(Type.String({ pattern: '^\\d+$', description: 'Cursor from a previous page (`previous`)' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
});

const SubscriberIdList = Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 100 });
const SubscriptionItem = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({ subscriberId: Type.String({ minLength: 1 }), identifier: Type.Optional(Type.String()) }),
]);

export const SubscriptionsBody = Type.Object({
  subscriberIds: Type.Optional(SubscriberIdList),
  subscriptions: Type.Optional(Type.Array(SubscriptionItem, { minItems: 1, maxItems: 100 })),
  name: Type.Optional(TopicName),
});
export type SubscriptionsBody = Static<typeof SubscriptionsBody>;

export const ListSubscriptionsQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'Cursor: `next` of the previous page' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  subscriberId: Type.Optional(Type.String()),
});

export const SubscriptionParams = Type.Object({ topicKey: Type.String(), identifier: Type.String() });
export const SubscriberSubscriptionsParams = Type.Object({ subscriberId: Type.String() });

export const ListSubscriberSubscriptionsQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'Cursor: `next` of the previous page' })),
  before: Type.Optional(Type.String({ description: 'not supported (400): page forwards with `after`' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  orderDirection: Type.Optional(Type.Union([Type.Literal('ASC'), Type.Literal('DESC')], { description: 'creation order (default ASC)' })),
  key: Type.Optional(Type.String({ description: 'only the subscription to this topic' })),
  contextKeys: Type.Optional(Type.Array(Type.String(), { description: 'exact set; Herald subscriptions have none, so only an empty set matches' })),
});

// ---- responses ------------------------------------------------------------------------------------

export const TopicResponse = Type.Object({
  _id: Type.String(),
  key: Type.String(),
  name: Type.Optional(Type.String()),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});

export const TopicListResponse = Type.Object({
  data: Type.Array(TopicResponse),
  next: Type.Union([Type.String(), Type.Null()]),
  previous: Type.Union([Type.String(), Type.Null()]),
  totalCount: Type.Integer(),
  totalCountCapped: Type.Boolean(),
});

const Nullable = Type.Union([Type.String(), Type.Null()]);
const SubscriptionSubscriber = Type.Object({
  _id: Type.String(),
  subscriberId: Type.String(),
  avatar: Type.Optional(Nullable),
  firstName: Type.Optional(Nullable),
  lastName: Type.Optional(Nullable),
  email: Type.Optional(Nullable),
});

export const SubscriptionResponse = Type.Object({
  _id: Type.String(),
  identifier: Type.String(),
  topic: Type.Object({ _id: Type.String(), key: Type.String(), name: Type.Optional(Type.String()) }),
  subscriber: Type.Union([SubscriptionSubscriber, Type.Null()]),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
});

export const SubscriptionsOutcomeResponse = Type.Object({
  data: Type.Array(SubscriptionResponse),
  meta: Type.Object({ totalCount: Type.Integer(), successful: Type.Integer(), failed: Type.Integer() }),
  errors: Type.Array(Type.Object({ subscriberId: Type.String(), code: Type.String(), message: Type.String() })),
});

export const SubscriptionListResponse = Type.Object({
  data: Type.Array(SubscriptionResponse),
  next: Type.Union([Type.String(), Type.Null()]),
  previous: Type.Null(),
  totalCount: Type.Integer(),
  totalCountCapped: Type.Boolean(),
});

/** SubscriptionDetailsResponseDto: Herald stores no per-subscription name or preferences, so neither is shown. */
export const SubscriptionDetailsResponse = Type.Object({ id: Type.String(), identifier: Type.String() });

export const TopicDeletedResponse = Type.Object({ acknowledged: Type.Boolean(), status: Type.String() });

// ---- mapping -------------------------------------------------------------------------------------------

export function toTopicResponse(topic: Topic): Static<typeof TopicResponse> {
  return {
    _id: topic._id,
    key: topic.key,
    ...(topic.name !== undefined ? { name: topic.name } : {}),
    createdAt: topic.createdAt,
    updatedAt: topic.updatedAt,
  };
}

function toSubscriptionSubscriber(subscriber: Subscriber): Static<typeof SubscriptionSubscriber> {
  return {
    _id: subscriber._id,
    subscriberId: subscriber.subscriberId,
    avatar: subscriber.avatar ?? null,
    firstName: subscriber.firstName ?? null,
    lastName: subscriber.lastName ?? null,
    email: subscriber.email ?? null,
  };
}

/** `identifier` is Herald's stable name for a (topic, subscriber) pair: `<topicKey>:<subscriberId>`. */
export function toSubscriptionResponse(view: SubscriptionView): Static<typeof SubscriptionResponse> {
  const { subscription, topic, subscriber } = view;
  return {
    _id: subscription._id,
    identifier: `${subscription.topicKey}:${subscription.subscriberId}`,
    topic: { _id: topic._id, key: topic.key, ...(topic.name !== undefined ? { name: topic.name } : {}) },
    subscriber: subscriber ? toSubscriptionSubscriber(subscriber) : null,
    createdAt: subscription.createdAt,
    updatedAt: subscription.createdAt,
  };
}

export function toSubscriptionDetailsResponse(view: SubscriptionView): Static<typeof SubscriptionDetailsResponse> {
  return { id: view.subscription._id, identifier: `${view.subscription.topicKey}:${view.subscription.subscriberId}` };
}

/** The external subscriberIds of a body: `subscriptions` (strings or `{ subscriberId }`) and the deprecated `subscriberIds`. */
export function subscriberIdsOf(body: SubscriptionsBody): string[] {
  const fromSubscriptions = (body.subscriptions ?? []).map((item) => (typeof item === 'string' ? item : item.subscriberId));
  return [...(body.subscriberIds ?? []), ...fromSubscriptions];
}
