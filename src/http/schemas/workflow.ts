import { Type, type Static } from '@sinclair/typebox';
import {
  DELIVERY_CHANNELS,
  FILTER_OPERATORS,
  FILTER_SOURCES,
  FILTER_TYPES,
  SEVERITIES,
  STEP_TYPES,
} from '../../domain/types.js';
import type { Workflow, WorkflowStep } from '../../domain/workflow.js';
import { FreeObject, IsoDateTime } from './common.js';

/**
 * `/v2/workflows` in Novu's v2 shapes (the `@novu/api` CreateWorkflowDto, UpdateWorkflowDto, PatchWorkflowDto,
 * WorkflowResponseDto and ListWorkflowResponse), plus Herald's step-level `filters`, `active`,
 * `shouldStopOnFail` and `variants`.
 */

/** A string enum (ajv reports "must be one of the following values: ..."). */
export const literals = <const T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>(Type.String({ enum: [...values] }));

export const WORKFLOW_STEP_TYPES = STEP_TYPES.filter((type) => type !== 'trigger');

export const StepFilterSchema = Type.Object({
  isNegated: Type.Boolean({ default: false }),
  type: literals(FILTER_TYPES),
  value: literals(['AND', 'OR'] as const),
  children: Type.Array(
    Type.Object({
      field: Type.String(),
      value: Type.String(),
      operator: literals(FILTER_OPERATORS),
      on: literals(FILTER_SOURCES),
    }),
    { maxItems: 100 },
  ),
});

const StepIdentifier = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' });
const WorkflowIdentifier = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$' });
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 16 });
const Severity = literals(SEVERITIES);
const NullableObject = Type.Union([FreeObject, Type.Null()]);

const stepFields = {
  _id: Type.Optional(Type.String({ description: 'An existing step id: the step keeps its identity on update' })),
  stepId: Type.Optional(StepIdentifier),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  type: literals(WORKFLOW_STEP_TYPES),
  controlValues: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Liquid templates over payload, subscriber, actor' })),
  filters: Type.Optional(Type.Array(StepFilterSchema, { maxItems: 50 })),
  active: Type.Optional(Type.Boolean()),
  shouldStopOnFail: Type.Optional(Type.Boolean()),
};

export const StepUpsertBody = Type.Object({
  ...stepFields,
  variants: Type.Optional(Type.Array(Type.Object(stepFields), { maxItems: 10 })),
});

const ChannelPreferences = Type.Object({
  all: Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()), readOnly: Type.Optional(Type.Boolean()) })),
  channels: Type.Optional(
    Type.Object(Object.fromEntries(DELIVERY_CHANNELS.map((channel) => [channel, Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()) }))]))),
  ),
});

export const PreferencesBody = Type.Object({
  user: Type.Optional(Type.Union([ChannelPreferences, Type.Null()])),
  workflow: Type.Optional(Type.Union([ChannelPreferences, Type.Null()])),
  ...ChannelPreferences.properties,
});

const commonBodyFields = {
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  tags: Type.Optional(Tags),
  active: Type.Optional(Type.Boolean()),
  validatePayload: Type.Optional(Type.Boolean({ description: 'Accepted for compatibility: a payload schema is always enforced' })),
  payloadSchema: Type.Optional(NullableObject),
  isTranslationEnabled: Type.Optional(Type.Boolean()),
  steps: Type.Array(StepUpsertBody, { maxItems: 50 }),
  preferences: Type.Optional(PreferencesBody),
  severity: Type.Optional(Severity),
  critical: Type.Optional(Type.Boolean()),
  data: Type.Optional(FreeObject),
};

export const CreateWorkflowBody = Type.Object({
  workflowId: WorkflowIdentifier,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  ...commonBodyFields,
});
export type CreateWorkflowBody = Static<typeof CreateWorkflowBody>;

export const UpdateWorkflowBody = Type.Object({
  workflowId: Type.Optional(WorkflowIdentifier),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  ...commonBodyFields,
});

export const PatchWorkflowBody = Type.Object({
  active: Type.Optional(Type.Boolean()),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  tags: Type.Optional(Tags),
  payloadSchema: Type.Optional(NullableObject),
  validatePayload: Type.Optional(Type.Boolean()),
  isTranslationEnabled: Type.Optional(Type.Boolean()),
  severity: Type.Optional(Severity),
  critical: Type.Optional(Type.Boolean()),
});

export const WorkflowParams = Type.Object({ workflowId: Type.String({ description: 'The workflow `_id` or its workflowId' }) });
export const WorkflowStepParams = Type.Object({
  workflowId: Type.String({ description: 'The workflow `_id` or its workflowId' }),
  stepId: Type.String({ description: "The step's stepId or its `_id`" }),
});

export const ListWorkflowsQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 200 })),
  offset: Type.Integer({ minimum: 0, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
});

// ---- responses -------------------------------------------------------------------------------------

const StepResponseFields = {
  _id: Type.String(),
  stepId: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  type: Type.String(),
  origin: Type.String(),
  workflowId: Type.String(),
  workflowDatabaseId: Type.String(),
  controls: Type.Object({
    values: FreeObject,
    dataSchema: Type.Optional(FreeObject),
  }),
  controlValues: FreeObject,
  variables: FreeObject,
  active: Type.Boolean(),
  shouldStopOnFail: Type.Boolean(),
  filters: Type.Array(StepFilterSchema),
};

export const StepResponse = Type.Object({
  ...StepResponseFields,
  variants: Type.Optional(Type.Array(Type.Object(StepResponseFields))),
});

const PreferenceSet = Type.Object({
  all: Type.Object({ enabled: Type.Boolean(), readOnly: Type.Boolean() }),
  channels: Type.Record(Type.String(), Type.Object({ enabled: Type.Boolean() })),
});

export const WorkflowResponse = Type.Object({
  _id: Type.String(),
  workflowId: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  active: Type.Boolean(),
  status: literals(['ACTIVE', 'INACTIVE', 'ERROR'] as const),
  origin: Type.String(),
  validatePayload: Type.Boolean(),
  payloadSchema: NullableObject,
  isTranslationEnabled: Type.Boolean(),
  preferences: Type.Object({ user: Type.Union([PreferenceSet, Type.Null()]), default: PreferenceSet }),
  preferenceSettings: Type.Record(Type.String(), Type.Boolean()),
  severity: Severity,
  critical: Type.Boolean(),
  draft: Type.Boolean(),
  data: Type.Optional(FreeObject),
  steps: Type.Array(StepResponse),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
  lastTriggeredAt: Type.Null(),
  lastPublishedAt: Type.Null(),
});
export type WorkflowResponse = Static<typeof WorkflowResponse>;

export const WorkflowListItem = Type.Object({
  _id: Type.String(),
  workflowId: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  active: Type.Boolean(),
  status: literals(['ACTIVE', 'INACTIVE', 'ERROR'] as const),
  origin: Type.String(),
  severity: Severity,
  isTranslationEnabled: Type.Boolean(),
  stepTypeOverviews: Type.Array(Type.String()),
  steps: Type.Array(Type.Object({ slug: Type.String(), type: Type.String() })),
  createdAt: IsoDateTime,
  updatedAt: IsoDateTime,
  lastTriggeredAt: Type.Null(),
});
export type WorkflowListItem = Static<typeof WorkflowListItem>;

export const WorkflowListResponse = Type.Object({ workflows: Type.Array(WorkflowListItem), totalCount: Type.Integer() });

// ---- mapping -------------------------------------------------------------------------------------------

function toStepResponseFields(step: Omit<WorkflowStep, 'variants'>, workflow: Workflow) {
  return {
    _id: step._id,
    stepId: step.stepId,
    slug: step.stepId,
    name: step.name,
    type: step.type,
    origin: workflow.origin,
    workflowId: workflow.workflowId,
    workflowDatabaseId: workflow._id,
    // Code-first steps: their control values live apart (/v1/bridge/controls); the code gives the form's schema.
    controls: step.bridge ? { values: step.controls, dataSchema: step.bridge.controlSchema } : { values: step.controls },
    controlValues: step.controls,
    variables: {
      type: 'object',
      properties: { payload: workflow.payloadSchema ?? { type: 'object' }, subscriber: { type: 'object' } },
    },
    active: step.active,
    shouldStopOnFail: step.shouldStopOnFail,
    filters: step.filters,
  };
}

function toPreferences(workflow: Workflow) {
  const channels = Object.fromEntries(
    DELIVERY_CHANNELS.map((channel) => [channel, { enabled: workflow.preferenceSettings[channel] ?? true }]),
  );
  const anyEnabled = Object.values(channels).some((channel) => channel.enabled);
  return { user: null, default: { all: { enabled: anyEnabled, readOnly: workflow.readOnly ?? workflow.critical }, channels } };
}

const statusOf = (workflow: Workflow) => (workflow.active ? ('ACTIVE' as const) : ('INACTIVE' as const));

/** The fields Novu's WorkflowResponseDto and WorkflowListResponseDto share. */
function workflowSummary(workflow: Workflow) {
  return {
    _id: workflow._id,
    workflowId: workflow.workflowId,
    slug: workflow.workflowId,
    name: workflow.name,
    description: workflow.description,
    tags: workflow.tags,
    active: workflow.active,
    status: statusOf(workflow),
    origin: workflow.origin,
    severity: workflow.severity,
    isTranslationEnabled: false,
    createdAt: workflow.createdAt,
    updatedAt: workflow.updatedAt,
    lastTriggeredAt: null,
  };
}

export function toWorkflowResponse(workflow: Workflow): WorkflowResponse {
  return {
    ...workflowSummary(workflow),
    validatePayload: workflow.payloadSchema !== undefined,
    payloadSchema: workflow.payloadSchema ?? null,
    preferences: toPreferences(workflow),
    preferenceSettings: workflow.preferenceSettings as Record<string, boolean>,
    critical: workflow.critical,
    draft: workflow.draft,
    ...(workflow.data !== undefined ? { data: workflow.data } : {}),
    steps: workflow.steps.map((step) => toStepResponse(step, workflow)),
    lastPublishedAt: null,
  };
}

/** GET /v2/workflows/{workflowId}/steps/{stepId}: one step as the workflow's `steps` show it. */
export function toStepResponse(step: WorkflowStep, workflow: Workflow): Static<typeof StepResponse> {
  return {
    ...toStepResponseFields(step, workflow),
    ...(step.variants?.length ? { variants: step.variants.map((variant) => toStepResponseFields(variant, workflow)) } : {}),
  };
}

export function toWorkflowListItem(workflow: Workflow): WorkflowListItem {
  return {
    ...workflowSummary(workflow),
    stepTypeOverviews: [...new Set(workflow.steps.map((step) => step.type))],
    steps: workflow.steps.map((step) => ({ slug: step.stepId, type: step.type })),
  };
}
