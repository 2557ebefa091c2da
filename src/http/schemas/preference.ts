import { Type, type Static } from '@sinclair/typebox';
import { toNotificationTrigger } from '../../domain/workflow-shape.js';
import { DELIVERY_CHANNELS, type DeliveryChannel } from '../../domain/types.js';
import type {
  GlobalPreferenceView,
  SubscriberPreferencesView,
  WorkflowPreferenceView,
} from '../../usecases/preferences/preference-view.js';
import { literals } from './workflow.js';

/**
 * Subscriber preferences on the wire: Novu v2 (`@novu/api` 3.19: GetSubscriberPreferencesDto, PatchSubscriberPreferencesDto,
 * BulkUpdateSubscriberPreferencesDto, GetPreferencesResponseDto) and Novu v1 (`@novu/node` 2.x: rows of
 * `{ template, preference: { enabled, channels, overrides } }`). The `to…` functions map the use-cases' views and are
 * meant for every route that shows preferences (the server API here, the Inbox's own routes).
 */

// ---- shared parts -----------------------------------------------------------------------------------------------

const ChannelFlags = Type.Object({
  in_app: Type.Optional(Type.Boolean()),
  email: Type.Optional(Type.Boolean()),
  sms: Type.Optional(Type.Boolean()),
  chat: Type.Optional(Type.Boolean()),
  push: Type.Optional(Type.Boolean()),
});

const TimeRange = Type.Object({ start: Type.String({ examples: ['09:00 AM'] }), end: Type.String({ examples: ['05:00 PM'] }) });
const DaySchedule = Type.Object({ isEnabled: Type.Boolean(), hours: Type.Optional(Type.Array(TimeRange)) });
const WeekdaySchedules = {
  monday: Type.Optional(DaySchedule),
  tuesday: Type.Optional(DaySchedule),
  wednesday: Type.Optional(DaySchedule),
  thursday: Type.Optional(DaySchedule),
  friday: Type.Optional(DaySchedule),
  saturday: Type.Optional(DaySchedule),
  sunday: Type.Optional(DaySchedule),
};

/** Novu's ScheduleDto plus Herald's optional `timezone` (default: the subscriber's, else UTC). */
export const ScheduleSchema = Type.Object({
  isEnabled: Type.Boolean(),
  weeklySchedule: Type.Optional(Type.Object(WeekdaySchedules)),
  timezone: Type.Optional(Type.String({ description: "IANA time zone the hours are read in; default the subscriber's timezone, else UTC" })),
});

/**
 * Request bodies take the schedule as a free object: its rules (days, "09:00 AM" times, end after start, the time
 * zone) are checked by the domain, whose 400 messages name the exact field.
 */
const ScheduleInput = Type.Unsafe<Record<string, unknown>>({ ...ScheduleSchema, additionalProperties: true });

/** Channel switches in a request: booleans by channel name; names are checked by the use-case (400 naming the key). */
const ChannelSwitchesInput = Type.Record(Type.String(), Type.Boolean(), {
  description: 'email, sms, in_app, chat, push (tool is accepted and ignored: Herald has no tool channel)',
});

const ContextInput = Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'accepted and ignored: preferences are not per context' }));

export const SubscriberPreferenceParams = Type.Object({ subscriberId: Type.String() });

// ---- v2 ---------------------------------------------------------------------------------------------------------

export const CriticalityQuery = Type.Object({
  criticality: Type.Optional(literals(['critical', 'nonCritical', 'all'] as const)),
  contextKeys: Type.Optional(Type.Array(Type.String(), { description: 'accepted and ignored' })),
});

export const PatchPreferencesBody = Type.Object({
  channels: Type.Optional(ChannelSwitchesInput),
  workflowId: Type.Optional(Type.String({ minLength: 1, description: "The workflow's _id or identifier; without it the global preference changes" })),
  schedule: Type.Optional(Type.Union([ScheduleInput, Type.Null()])),
  context: ContextInput,
});

export const BulkPreferencesBody = Type.Object({
  preferences: Type.Array(
    Type.Object({ channels: ChannelSwitchesInput, workflowId: Type.String({ minLength: 1 }) }),
    { minItems: 1, maxItems: 100 },
  ),
  context: ContextInput,
});

const V2WorkflowInfo = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  identifier: Type.String(),
  name: Type.String(),
  critical: Type.Boolean(),
  tags: Type.Array(Type.String()),
  updatedAt: Type.String(),
});

const V2Override = Type.Object({ channel: literals(DELIVERY_CHANNELS), source: literals(['subscriber', 'template'] as const) });

export const V2GlobalPreference = Type.Object({ enabled: Type.Boolean(), channels: ChannelFlags, schedule: Type.Optional(ScheduleSchema) });

export const V2WorkflowPreference = Type.Object({
  enabled: Type.Boolean(),
  channels: ChannelFlags,
  overrides: Type.Array(V2Override),
  workflow: V2WorkflowInfo,
  updatedAt: Type.Optional(Type.String()),
});

export const V2SubscriberPreferences = Type.Object({ global: V2GlobalPreference, workflows: Type.Array(V2WorkflowPreference) });
export type V2SubscriberPreferences = Static<typeof V2SubscriberPreferences>;

/** One workflow's preference in the bulk answer (Novu's GetPreferencesResponseDto, level `template`). */
export const V2LevelPreference = Type.Object({
  level: literals(['global', 'template'] as const),
  workflow: Type.Object({
    id: Type.String(),
    identifier: Type.String(),
    name: Type.String(),
    critical: Type.Boolean(),
    tags: Type.Array(Type.String()),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    severity: Type.String(),
  }),
  enabled: Type.Boolean(),
  channels: ChannelFlags,
});

export function toV2Global(global: GlobalPreferenceView): Static<typeof V2GlobalPreference> {
  return { enabled: global.enabled, channels: global.channels, ...(global.schedule ? { schedule: global.schedule } : {}) };
}

export function toV2WorkflowPreference(view: WorkflowPreferenceView): Static<typeof V2WorkflowPreference> {
  const { workflow } = view;
  return {
    enabled: view.enabled,
    channels: view.channels,
    overrides: view.overrides,
    workflow: {
      id: workflow._id,
      slug: workflow.workflowId,
      identifier: workflow.workflowId,
      name: workflow.name,
      critical: workflow.critical || workflow.readOnly === true,
      tags: workflow.tags,
      updatedAt: workflow.updatedAt,
    },
    ...(view.updatedAt ? { updatedAt: view.updatedAt } : {}),
  };
}

export function toV2Preferences(view: SubscriberPreferencesView): V2SubscriberPreferences {
  return { global: toV2Global(view.global), workflows: view.workflows.map(toV2WorkflowPreference) };
}

export function toV2LevelPreference(view: WorkflowPreferenceView): Static<typeof V2LevelPreference> {
  const { workflow } = view;
  return {
    level: 'template',
    workflow: {
      id: workflow._id,
      identifier: workflow.workflowId,
      name: workflow.name,
      critical: workflow.critical || workflow.readOnly === true,
      tags: workflow.tags,
      ...(workflow.data ? { data: workflow.data } : {}),
      severity: workflow.severity,
    },
    enabled: view.enabled,
    channels: view.channels,
  };
}

// ---- v1 ---------------------------------------------------------------------------------------------------------

export const PreferenceLevelParams = Type.Object({ subscriberId: Type.String(), level: literals(['global', 'template'] as const) });

export const WorkflowPreferenceParams = Type.Object({ subscriberId: Type.String(), workflowId: Type.String() });

const ChannelSwitch = Type.Object({ type: literals(DELIVERY_CHANNELS), enabled: Type.Boolean() });

export const V1WorkflowPreferenceBody = Type.Object({ channel: Type.Optional(ChannelSwitch), enabled: Type.Optional(Type.Boolean()) });

export const V1GlobalPreferenceBody = Type.Object({ enabled: Type.Optional(Type.Boolean()), preferences: Type.Optional(Type.Array(ChannelSwitch)) });

const V1Template = Type.Object({
  _id: Type.String(),
  name: Type.String(),
  tags: Type.Array(Type.String()),
  critical: Type.Boolean(),
  triggers: Type.Array(Type.Object({ type: Type.String(), identifier: Type.String(), variables: Type.Array(Type.Object({ name: Type.String() })) })),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const V1PreferenceRow = Type.Object({
  template: V1Template,
  preference: Type.Object({
    enabled: Type.Boolean(),
    channels: ChannelFlags,
    overrides: Type.Array(V2Override),
  }),
});
export type V1PreferenceRow = Static<typeof V1PreferenceRow>;

export const V1GlobalRow = Type.Object({ preference: Type.Object({ enabled: Type.Boolean(), channels: ChannelFlags }) });
export type V1GlobalRow = Static<typeof V1GlobalRow>;

export function toV1PreferenceRow(view: WorkflowPreferenceView): V1PreferenceRow {
  const { workflow } = view;
  return {
    template: {
      _id: workflow._id,
      name: workflow.name,
      tags: workflow.tags,
      critical: workflow.critical || workflow.readOnly === true,
      triggers: [toNotificationTrigger(workflow)],
      ...(workflow.data ? { data: workflow.data } : {}),
    },
    preference: { enabled: view.enabled, channels: view.channels, overrides: view.overrides },
  };
}

export function toV1GlobalRow(global: GlobalPreferenceView): V1GlobalRow {
  return { preference: { enabled: global.enabled, channels: global.channels } };
}
