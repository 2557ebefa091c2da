import { Type, type Static } from '@sinclair/typebox';
import { EVENT_STATUSES } from '../../domain/event-status.js';
import { EXECUTION_DETAIL_SOURCES, EXECUTION_DETAIL_STATUSES, SEVERITIES, STEP_TYPES, TIME_UNITS } from '../../domain/types.js';
import { FreeObject, IsoDateTime } from './common.js';
import { StringEnum } from './message.js';
import { NullableString } from './subscriber.js';

export const ExecutionDetailSchema = Type.Object({
  _id: Type.String(),
  createdAt: Type.Optional(IsoDateTime),
  status: StringEnum(EXECUTION_DETAIL_STATUSES),
  detail: Type.String(),
  isRetry: Type.Boolean(),
  isTest: Type.Boolean(),
  providerId: Type.Optional(Type.String()),
  raw: Type.Optional(NullableString()),
  source: StringEnum(EXECUTION_DETAIL_SOURCES),
});

const DigestTimedConfigSchema = Type.Object(
  {
    atTime: Type.Optional(Type.String()),
    weekDays: Type.Optional(Type.Array(Type.String())),
    monthDays: Type.Optional(Type.Array(Type.Number())),
    ordinal: Type.Optional(Type.String()),
    ordinalValue: Type.Optional(Type.String()),
    monthlyType: Type.Optional(Type.String()),
    cronExpression: Type.Optional(Type.String()),
    untilDate: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const DigestMetadataSchema = Type.Object(
  {
    type: StringEnum(['regular', 'backoff', 'timed'] as const),
    digestKey: Type.Optional(Type.String()),
    amount: Type.Optional(Type.Number()),
    unit: Type.Optional(StringEnum(TIME_UNITS)),
    events: Type.Optional(Type.Array(FreeObject)),
    backoff: Type.Optional(Type.Boolean()),
    updateMode: Type.Optional(Type.Boolean()),
    backoffAmount: Type.Optional(Type.Number()),
    backoffUnit: Type.Optional(StringEnum(TIME_UNITS)),
    timed: Type.Optional(DigestTimedConfigSchema),
  },
  { additionalProperties: true },
);

/** The spec's JobStep; `variants` nest to any depth, so they are described as free objects. */
export const JobStepSchema = Type.Object(
  {
    _id: Type.String(),
    active: Type.Boolean(),
    filters: Type.Array(FreeObject),
    _templateId: Type.String(),
    name: Type.Optional(Type.String()),
    _parentId: Type.Optional(NullableString()),
    template: Type.Optional(FreeObject),
    variants: Type.Optional(Type.Array(FreeObject)),
    replyCallback: Type.Optional(FreeObject),
    controlVariables: Type.Optional(FreeObject),
    metadata: Type.Optional(FreeObject),
    issues: Type.Optional(FreeObject),
  },
  { additionalProperties: true },
);

export const JobSchema = Type.Object({
  _id: Type.String(),
  type: StringEnum(STEP_TYPES),
  digest: Type.Optional(DigestMetadataSchema),
  executionDetails: Type.Array(ExecutionDetailSchema),
  step: JobStepSchema,
  overrides: Type.Optional(FreeObject),
  payload: Type.Optional(FreeObject),
  providerId: Type.String(),
  status: Type.String({ description: 'pending, queued, running, completed, failed, delayed, canceled, merged, skipped' }),
  updatedAt: Type.Optional(IsoDateTime),
  scheduleExtensionsCount: Type.Optional(Type.Integer()),
});

const TriggerSchema = Type.Object({
  type: StringEnum(['event'] as const),
  identifier: Type.String(),
  variables: Type.Array(Type.Object({ name: Type.String() }, { additionalProperties: true })),
  subscriberVariables: Type.Optional(Type.Array(Type.Object({ name: Type.String() }, { additionalProperties: true }))),
});

/** The spec's Notification event (activity notification). */
export const NotificationEventSchema = Type.Object({
  _id: Type.String(),
  _environmentId: Type.String(),
  _organizationId: Type.String(),
  _subscriberId: Type.String(),
  transactionId: Type.String(),
  _templateId: Type.Optional(Type.String()),
  _digestedNotificationId: Type.Optional(Type.String()),
  createdAt: Type.Optional(IsoDateTime),
  updatedAt: Type.Optional(IsoDateTime),
  channels: Type.Optional(Type.Array(StringEnum(STEP_TYPES))),
  subscriber: Type.Optional(
    Type.Object({
      subscriberId: Type.String(),
      _id: Type.String(),
      firstName: Type.Optional(Type.String()),
      lastName: Type.Optional(Type.String()),
      email: Type.Optional(Type.String()),
      phone: Type.Optional(Type.String()),
    }),
  ),
  template: Type.Optional(
    Type.Object({
      _id: Type.Optional(Type.String()),
      name: Type.String(),
      triggers: Type.Array(TriggerSchema),
      origin: Type.Optional(StringEnum(['platform-cloud', 'platform-cloud-v1', 'external'] as const)),
    }),
  ),
  jobs: Type.Optional(Type.Array(JobSchema)),
  payload: Type.Optional(FreeObject),
  controls: Type.Optional(FreeObject),
  to: Type.Optional(FreeObject),
  tags: Type.Optional(Type.Array(Type.String())),
  topics: Type.Optional(Type.Array(Type.Object({ _topicId: Type.String(), topicKey: Type.String() }))),
  severity: Type.Optional(StringEnum(SEVERITIES)),
  critical: Type.Optional(Type.Boolean()),
  contextKeys: Type.Optional(Type.Array(Type.String())),
});

const manyOrOne = (description: string) => Type.Optional(Type.Array(Type.String(), { description: `${description}; repeat the parameter for several` }));

export const ListNotificationsQuery = Type.Object({
  channels: Type.Optional(Type.Array(StringEnum(STEP_TYPES), { description: 'channel types, any of' })),
  templates: manyOrOne('template (workflow) ids'),
  emails: manyOrOne('subscriber email addresses'),
  search: Type.Optional(Type.String({ description: 'deprecated: substring of the subscriberId, email or name' })),
  subscriberIds: manyOrOne('external subscriberIds'),
  severity: Type.Optional(Type.Array(StringEnum(SEVERITIES), { description: 'severity levels, any of' })),
  page: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
  transactionId: Type.Optional(Type.String()),
  topicKey: Type.Optional(Type.String()),
  subscriptionId: Type.Optional(Type.String()),
  contextKeys: manyOrOne('exact set of context keys, order-insensitive; entries type:id'),
  after: Type.Optional(Type.String({ description: 'ISO 8601; events created after it (exclusive)' })),
  before: Type.Optional(Type.String({ description: 'ISO 8601; events created before it (exclusive); default now' })),
  status: Type.Optional(
    StringEnum(EVENT_STATUSES, {
      description:
        'Herald extension (not in Novu): the event status from its jobs. failed: any job failed; pending: none failed and any ' +
        'pending, queued, running or delayed; canceled: every job canceled; completed: any other event with jobs.',
    }),
  ),
});
export type ListNotificationsQuery = Static<typeof ListNotificationsQuery>;

export const NotificationParams = Type.Object({ notificationId: Type.String() });
