/**
 * Code-first workflows (@novu/framework): a discovered workflow as Herald stores it, and the `state` of earlier steps
 * the framework needs on every execute. Pure; the shapes follow the framework's own schemas (2.13.2).
 */
import { CronExpressionParser } from 'cron-parser';
import { SEVERITIES, type DeliveryChannel, type Severity } from './types.js';
import type { BridgeStepInfo, Workflow, WorkflowStep, WorkflowStepType } from './workflow.js';

/** The parts of a discover answer Herald reads (validated loosely by the bridge client). */
export interface DiscoveredStepShape {
  stepId: string;
  type: string;
  controls?: { schema?: Record<string, unknown> };
  outputs?: { schema?: Record<string, unknown> };
  options?: Record<string, unknown>;
  providers?: Array<{ type: string }>;
}

export interface DiscoveredWorkflowShape {
  workflowId: string;
  name?: string;
  description?: string;
  tags?: string[];
  severity?: string;
  preferences?: { all?: { enabled?: boolean; readOnly?: boolean }; channels?: Record<string, { enabled?: boolean } | undefined> };
  payload?: { schema?: Record<string, unknown> };
  steps: DiscoveredStepShape[];
}

const RUNNABLE_TYPES: ReadonlySet<string> = new Set<WorkflowStepType>([
  'in_app', 'email', 'sms', 'chat', 'push', 'digest', 'delay', 'throttle', 'custom', 'http_request',
]);

/** Herald's step type for a framework step type: `tool` (agents) and types Herald does not know run as custom steps. */
export function heraldStepType(frameworkType: string): WorkflowStepType {
  return RUNNABLE_TYPES.has(frameworkType) ? (frameworkType as WorkflowStepType) : 'custom';
}

/** Ids for a new workflow and its new steps; existing ones are kept so jobs in flight still find their step. */
export interface WorkflowIds {
  newId(): string;
  environmentId: string;
  organizationId: string;
  notificationGroupId: string;
  now: string;
}

/**
 * The stored workflow for a discovered one: origin `external`, trigger identifier = workflowId, payload schema,
 * tags, severity and preferences as the workflow's defaults (`all.readOnly` makes it critical, as Novu does), steps
 * without control values (those are kept apart, so a re-sync never loses them). A re-sync of a known workflow keeps
 * its `_id`, its creation time and the `_id` of each step whose stepId it still has.
 */
export function workflowFromDiscovered(discovered: DiscoveredWorkflowShape, existing: Workflow | undefined, ids: WorkflowIds): Workflow {
  const previousSteps = new Map((existing?.steps ?? []).map((step) => [step.stepId, step]));
  const steps: WorkflowStep[] = discovered.steps.map((step) => {
    const options = plainOptions(step.options);
    const bridge: BridgeStepInfo = {
      type: step.type,
      controlSchema: step.controls?.schema ?? { type: 'object', properties: {} },
      options,
      providers: (step.providers ?? []).map((provider) => provider.type).filter((type) => typeof type === 'string'),
    };
    if (step.outputs?.schema) bridge.outputSchema = step.outputs.schema;
    return {
      _id: previousSteps.get(step.stepId)?._id ?? ids.newId(),
      stepId: step.stepId,
      name: step.stepId,
      type: heraldStepType(step.type),
      active: true,
      shouldStopOnFail: options.failOnErrorEnabled === true,
      controls: {},
      filters: [],
      bridge,
    };
  });
  const preferences = discovered.preferences ?? {};
  const allEnabled = preferences.all?.enabled;
  const channels = preferences.channels ?? {};
  const preferenceSettings: Partial<Record<DeliveryChannel, boolean>> = {};
  for (const channel of ['in_app', 'email', 'sms', 'chat', 'push'] as const) {
    preferenceSettings[channel] = channels[channel]?.enabled ?? allEnabled ?? true;
  }
  const readOnly = preferences.all?.readOnly === true;
  const severity = (SEVERITIES as readonly string[]).includes(discovered.severity ?? '') ? (discovered.severity as Severity) : 'none';
  const workflow: Workflow = {
    _id: existing?._id ?? ids.newId(),
    _environmentId: ids.environmentId,
    _organizationId: ids.organizationId,
    workflowId: discovered.workflowId,
    name: discovered.name || discovered.workflowId,
    description: discovered.description ?? '',
    tags: Array.isArray(discovered.tags) ? discovered.tags.filter((tag) => typeof tag === 'string') : [],
    active: existing?.active ?? true,
    draft: false,
    critical: readOnly,
    severity,
    preferenceSettings,
    readOnly,
    steps,
    _notificationGroupId: ids.notificationGroupId,
    origin: 'external',
    _creatorId: existing?._creatorId ?? 'bridge',
    deleted: false,
    createdAt: existing?.createdAt ?? ids.now,
    updatedAt: ids.now,
  };
  const schema = discovered.payload?.schema;
  if (schema && typeof schema === 'object' && Object.keys(schema).length > 0) workflow.payloadSchema = schema;
  return workflow;
}

/** Options as sent by discover, without what cannot be stored as JSON. */
function plainOptions(options: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!options || typeof options !== 'object') return {};
  return JSON.parse(JSON.stringify(options)) as Record<string, unknown>;
}

/** What a sync changes: workflows it creates, updates, and deletes (external ones no longer discovered). */
export interface BridgeDiff {
  created: string[];
  updated: string[];
  unchanged: string[];
  deleted: string[];
}

/** Compares the discovered workflows with the stored external ones (by the parts a sync writes). */
export function diffDiscovered(discovered: DiscoveredWorkflowShape[], stored: Workflow[], ids: WorkflowIds): BridgeDiff {
  const storedById = new Map(stored.map((workflow) => [workflow.workflowId, workflow]));
  const diff: BridgeDiff = { created: [], updated: [], unchanged: [], deleted: [] };
  for (const candidate of discovered) {
    const existing = storedById.get(candidate.workflowId);
    if (!existing) {
      diff.created.push(candidate.workflowId);
      continue;
    }
    const next = workflowFromDiscovered(candidate, existing, ids);
    diff[sameDefinition(existing, next) ? 'unchanged' : 'updated'].push(candidate.workflowId);
  }
  const discoveredIds = new Set(discovered.map((workflow) => workflow.workflowId));
  diff.deleted = stored.filter((workflow) => !discoveredIds.has(workflow.workflowId)).map((workflow) => workflow.workflowId);
  return diff;
}

function sameDefinition(a: Workflow, b: Workflow): boolean {
  const shape = (workflow: Workflow) =>
    JSON.stringify([workflow.name, workflow.description, workflow.tags, workflow.severity, workflow.critical, workflow.preferenceSettings, workflow.payloadSchema ?? null, workflow.steps]);
  return shape(a) === shape(b);
}

// ---- execution state -------------------------------------------------------------------------------------

/** What Herald knows of an earlier step of the same event, to describe it to the framework. */
export interface EarlierStep {
  stepId: string;
  /** The framework's step type (from discover). */
  type: string;
  status: string;
  error?: string;
  /** In-app: the message's state (absent when the step made no message, e.g. skipped). */
  inApp?: { seen: boolean; read: boolean; lastSeenDate?: string | null; lastReadDate?: string | null };
  /** Delay: how long it waited, ms. */
  durationMs?: number;
  /** Digest: the digested events. */
  digestEvents?: Array<{ id: string; time: string; payload: Record<string, unknown> }>;
  /** Custom / http_request / tool: the step's outputs as the bridge computed them. */
  outputs?: Record<string, unknown>;
}

/**
 * The `outputs` the framework accepts for an earlier step of each type (its result schemas, no extra properties):
 * in_app `{seen, read, lastSeenDate, lastReadDate}` (false/null when no message exists), channel steps `{}`, delay
 * `{duration}`, digest `{events, eventCount}`, throttle `{throttled}`, custom = the step's own output.
 */
export function stepResultOutputs(step: EarlierStep): Record<string, unknown> {
  switch (step.type) {
    case 'in_app':
      return {
        seen: step.inApp?.seen ?? false,
        read: step.inApp?.read ?? false,
        lastSeenDate: step.inApp?.lastSeenDate ?? null,
        lastReadDate: step.inApp?.lastReadDate ?? null,
      };
    case 'email':
    case 'sms':
    case 'chat':
    case 'push':
      return {};
    case 'delay':
      return { duration: step.durationMs ?? 0 };
    case 'digest': {
      const events = step.digestEvents ?? [];
      return { events, eventCount: events.length };
    }
    case 'throttle':
      return { throttled: false };
    default:
      return step.outputs ?? {};
  }
}

/** The `state` array of an execute or preview request: every earlier step, in order. */
export function bridgeState(steps: EarlierStep[]): Array<{ stepId: string; outputs: Record<string, unknown>; state: { status: string; error?: string } }> {
  return steps.map((step) => ({
    stepId: step.stepId,
    outputs: stepResultOutputs(step),
    state: step.error ? { status: step.status, error: step.error } : { status: step.status },
  }));
}

/**
 * Per-trigger control values (`controls: { steps: { <stepId>: {...} } }` as Novu accepts them) over the stored
 * ones; the stored ones over nothing.
 */
export function controlValuesFor(stepId: string, stored: Record<string, unknown> | undefined, triggerControls: unknown): Record<string, unknown> {
  const steps = triggerControls && typeof triggerControls === 'object' ? (triggerControls as { steps?: unknown }).steps : undefined;
  const fromTrigger = steps && typeof steps === 'object' ? (steps as Record<string, unknown>)[stepId] : undefined;
  return {
    ...(stored ?? {}),
    ...(fromTrigger && typeof fromTrigger === 'object' && !Array.isArray(fromTrigger) ? (fromTrigger as Record<string, unknown>) : {}),
  };
}

/** The next time a timed delay's cron matches (UTC), epoch ms; undefined when the expression does not parse. */
export function nextCronAt(cron: string, nowMs: number): number | undefined {
  try {
    return CronExpressionParser.parse(cron.trim(), { currentDate: new Date(nowMs), tz: 'UTC' }).next().toDate().getTime();
  } catch {
    return undefined;
  }
}
