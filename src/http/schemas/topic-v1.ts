import { Type, type Static } from '@sinclair/typebox';
import type { TopicSubscription } from '../../domain/types.js';
import type { TopicWithMembers } from '../../usecases/topics/topic-members.js';
import { PageEnvelope } from './common.js';
import { TopicKey, TopicName } from './topic.js';

/**
 * `/v1/topics` in Novu's v1 shapes (the legacy `@novu/node` SDK): TopicDto lists its subscribers' ids; lists are
 * offset pages (`page`, `pageSize`). The same topics and subscriptions as `/v2/topics`.
 */

export const CreateTopicV1Body = Type.Object({ key: TopicKey, name: TopicName });
export const RenameTopicV1Body = Type.Object({ name: TopicName });

export const ListTopicsV1Query = Type.Object({
  page: Type.Integer({ minimum: 0, default: 0 }),
  pageSize: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  key: Type.Optional(Type.String({ description: 'exact topic key' })),
});

export const TopicMembersV1Body = Type.Object({
  subscribers: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 500, description: 'external subscriberIds' }),
});

export const TopicParamsV1 = Type.Object({ topicKey: Type.String() });
export const TopicMemberParamsV1 = Type.Object({ topicKey: Type.String(), subscriberId: Type.String() });

export const TopicV1 = Type.Object({
  _id: Type.String(),
  _organizationId: Type.String(),
  _environmentId: Type.String(),
  key: Type.String(),
  name: Type.String(),
  subscribers: Type.Array(Type.String(), { description: 'subscriberIds of the topic' }),
});

export const CreatedTopicV1 = Type.Object({ _id: Type.String(), key: Type.String() });

export const TopicListV1Body = PageEnvelope(TopicV1, { totalCount: true });

export const AddTopicMembersV1Response = Type.Object({
  succeeded: Type.Array(Type.String()),
  failed: Type.Object({ notFound: Type.Array(Type.String()) }),
});

export const TopicMembershipV1 = Type.Object({
  _organizationId: Type.String(),
  _environmentId: Type.String(),
  _subscriberId: Type.String(),
  _topicId: Type.String(),
  topicKey: Type.String(),
  externalSubscriberId: Type.String(),
});

/** A topic created without a name (through v2) shows its key as its name: v1's name is required. */
export function toTopicV1({ topic, subscriberIds }: TopicWithMembers): Static<typeof TopicV1> {
  return {
    _id: topic._id,
    _organizationId: topic._organizationId,
    _environmentId: topic._environmentId,
    key: topic.key,
    name: topic.name ?? topic.key,
    subscribers: subscriberIds,
  };
}

export function toTopicMembershipV1(subscription: TopicSubscription, organizationId: string): Static<typeof TopicMembershipV1> {
  return {
    _organizationId: organizationId,
    _environmentId: subscription._environmentId,
    _subscriberId: subscription._subscriberId,
    _topicId: subscription._topicId,
    topicKey: subscription.topicKey,
    externalSubscriberId: subscription.subscriberId,
  };
}
