import { MessageSchema } from './message.js';
import { Type, type Static } from '@sinclair/typebox';
import { FreeObject } from './common.js';

/** A subscriber named in `to` by object: created when unknown, its profile fields updated otherwise. */
export const SubscriberRecipient = Type.Object(
  {
    subscriberId: Type.String({ minLength: 1 }),
    firstName: Type.Optional(Type.String()),
    lastName: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    phone: Type.Optional(Type.String()),
    avatar: Type.Optional(Type.String()),
    locale: Type.Optional(Type.String()),
    timezone: Type.Optional(Type.String()),
    data: Type.Optional(FreeObject),
  },
  { additionalProperties: true },
);

export const TopicRecipient = Type.Object({
  type: Type.Literal('Topic'),
  topicKey: Type.String({ minLength: 1 }),
  exclude: Type.Optional(Type.Array(Type.String())),
});

export const Recipient = Type.Union([Type.String({ minLength: 1 }), TopicRecipient, SubscriberRecipient]);

const TriggerContext = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Object({ id: Type.String(), data: Type.Optional(FreeObject) })]),
  { description: '`{ tenant: "acme" }` becomes the context key `tenant:acme` on the event and its messages' },
);

const TriggerFields = {
  name: Type.String({ minLength: 1, description: 'The workflow identifier (workflowId)' }),
  payload: Type.Optional(FreeObject),
  overrides: Type.Optional(FreeObject),
  transactionId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Generated when absent; a reused one deduplicates' })),
  actor: Type.Optional(Type.Union([Type.String(), SubscriberRecipient])),
  context: Type.Optional(TriggerContext),
  tenant: Type.Optional(Type.Union([Type.String(), FreeObject])),
  bridgeUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'Code-first workflows: discover and run the workflow from this @novu/framework bridge' })),
  controls: Type.Optional(
    Type.Object(
      { steps: Type.Optional(Type.Record(Type.String(), FreeObject)) },
      { additionalProperties: true, description: 'Code-first workflows: control values for this trigger, `{ steps: { <stepId>: {...} } }`' },
    ),
  ),
};

export const TriggerBody = Type.Object({
  ...TriggerFields,
  to: Type.Union([Recipient, Type.Array(Recipient)], { description: 'A subscriberId, a subscriber object, a topic, or an array of these' }),
});
export type TriggerBody = Static<typeof TriggerBody>;

export const BulkTriggerBody = Type.Object({ events: Type.Array(TriggerBody, { minItems: 1 }) });

export const BroadcastBody = Type.Object(TriggerFields);

export const TriggerResponse = Type.Object({
  acknowledged: Type.Boolean(),
  status: Type.String({ description: '`processed`, or `error` for a bulk entry that was not accepted' }),
  transactionId: Type.Optional(Type.String()),
  error: Type.Optional(Type.Array(Type.String())),
});

export const TransactionParams = Type.Object({ transactionId: Type.String({ minLength: 1 }) });

export const FeedParams = Type.Object({ subscriberId: Type.String({ minLength: 1 }) });

export const FeedQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  read: Type.Optional(Type.Boolean()),
  seen: Type.Optional(Type.Boolean()),
});

export const UnseenQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  seen: Type.Optional(Type.Boolean({ default: false, description: 'false (default): count unseen messages; true: count seen ones' })),
});

/** A feed entry: the Message shape plus the fields Novu's feed item requires. */
export const FeedItemSchema = Type.Object(
  {
    ...MessageSchema.properties,
    subscriber: Type.Optional(
      Type.Object({
        _id: Type.String(),
        subscriberId: Type.String(),
        firstName: Type.Optional(Type.String()),
        lastName: Type.Optional(Type.String()),
        avatar: Type.Optional(Type.String()),
      }),
    ),
    _jobId: Type.String(),
    _templateId: Type.String(),
    archived: Type.Boolean(),
  },
  { additionalProperties: false },
);
