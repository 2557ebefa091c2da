import type {
  JobStep,
  NotificationEventTemplate,
  NotificationStep,
  NotificationTrigger,
  WorkflowTemplate,
} from './types.js';
import { deepFreeze, isDeepFrozen } from './deep-freeze.js';
import type { Workflow, WorkflowStep } from './workflow.js';

/**
 * The spec's shapes derived from a stored Workflow: a message's `template` (the spec's Workflow), a
 * notification event's `template`, and a job's `step` (JobStep). Pure mappings; no field is invented
 * beyond what the spec requires (e.g. `deletedAt: ''` for a live workflow, since the spec marks it required).
 */

/** The notification group every workflow belongs to (Herald has one per environment, named "General"). */
export const DEFAULT_NOTIFICATION_GROUP_NAME = 'General';

/** Control keys that are step metadata (the spec's delay/digest shapes, plus throttle's own). */
const METADATA_KEYS: Partial<Record<WorkflowStep['type'], readonly string[]>> = {
  delay: ['type', 'amount', 'unit', 'delayPath', 'cron'],
  digest: ['type', 'amount', 'unit', 'digestKey', 'backoff', 'backoffAmount', 'backoffUnit', 'updateMode', 'timed', 'cron', 'lookBackWindow'],
  throttle: ['type', 'amount', 'unit', 'threshold', 'throttleKey', 'dynamicKey'],
};

/** The trigger of a workflow: its identifier is the workflowId; variables are the payload schema's top-level properties. */
export function toNotificationTrigger(workflow: Workflow): NotificationTrigger {
  const properties = workflow.payloadSchema?.properties;
  const names = properties && typeof properties === 'object' && !Array.isArray(properties) ? Object.keys(properties) : [];
  return { type: 'event', identifier: workflow.workflowId, variables: names.map((name) => ({ name })) };
}

/** The spec's Workflow shape: what a Message's `template` carries. */
export function toWorkflowTemplate(workflow: Workflow): WorkflowTemplate {
  return {
    _id: workflow._id,
    name: workflow.name,
    description: workflow.description,
    active: workflow.active,
    draft: workflow.draft,
    critical: workflow.critical,
    preferenceSettings: { ...workflow.preferenceSettings },
    tags: [...workflow.tags],
    steps: workflow.steps.map(toNotificationStep),
    triggers: [toNotificationTrigger(workflow)],
    _organizationId: workflow._organizationId,
    _creatorId: workflow._creatorId,
    _environmentId: workflow._environmentId,
    _notificationGroupId: workflow._notificationGroupId,
    notificationGroup: {
      _id: workflow._notificationGroupId,
      name: DEFAULT_NOTIFICATION_GROUP_NAME,
      _environmentId: workflow._environmentId,
      _organizationId: workflow._organizationId,
    },
    deleted: workflow.deleted,
    deletedAt: workflow.deletedAt ?? '',
    deletedBy: workflow.deletedBy ?? '',
    ...(workflow.data !== undefined ? { data: workflow.data } : {}),
  };
}

/** The templates of deep-frozen workflows, by workflow (see workflowTemplateOf). */
const sharedTemplates = new WeakMap<Workflow, WorkflowTemplate>();

/**
 * A message's template: toWorkflowTemplate, made once per deep-frozen workflow (the workflow cache's shared copy,
 * which cannot change) and deep-frozen itself, so the messages of that workflow share one template object and the
 * store identifies its snapshot once per object rather than per message (TemplateSnapshots.idOfTemplate). Any other
 * workflow gets a new template each time.
 */
export function workflowTemplateOf(workflow: Workflow): WorkflowTemplate {
  if (!Object.isFrozen(workflow)) return toWorkflowTemplate(workflow);
  let template = sharedTemplates.get(workflow);
  if (template === undefined) {
    // Checked once per workflow object (freezing cannot be undone): one frozen at its top only could still change.
    if (!isDeepFrozen(workflow)) return toWorkflowTemplate(workflow);
    template = deepFreeze(toWorkflowTemplate(workflow));
    sharedTemplates.set(workflow, template);
  }
  return template;
}

/**
 * A notification event's `template`: name, triggers and id. `origin` is optional in the spec and its
 * values there (`platform-cloud`, `platform-cloud-v1`) differ from the ones Novu clients validate
 * (`novu-cloud`, `novu-cloud-v1`); only `external`, which both accept, is sent, so the record is valid
 * for the spec and for an unchanged Novu SDK alike.
 */
export function toNotificationEventTemplate(workflow: Workflow): NotificationEventTemplate {
  return {
    _id: workflow._id,
    name: workflow.name,
    triggers: [toNotificationTrigger(workflow)],
    ...(workflow.origin === 'external' ? { origin: 'external' as const } : {}),
  };
}

/** The metadata fields of a delay, digest or throttle step's controls; undefined for other step types. */
export function stepMetadata(step: Pick<WorkflowStep, 'type' | 'controls'>): Record<string, unknown> | undefined {
  const keys = METADATA_KEYS[step.type];
  if (!keys) return undefined;
  return Object.fromEntries(keys.filter((key) => step.controls[key] !== undefined).map((key) => [key, step.controls[key]]));
}

/** The spec's NotificationStep (inside a message's `template.steps`). */
export function toNotificationStep(step: WorkflowStep | Omit<WorkflowStep, 'variants'>): NotificationStep {
  const metadata = stepMetadata(step);
  const variants = 'variants' in step && step.variants?.length ? step.variants.map(toNotificationStep) : undefined;
  return {
    _id: step._id,
    uuid: step.stepId,
    name: step.name,
    _templateId: step._id,
    active: step.active,
    shouldStopOnFail: step.shouldStopOnFail,
    template: { type: step.type, ...step.controls },
    filters: step.filters,
    ...(metadata ? { metadata } : {}),
    ...(variants ? { variants } : {}),
  };
}

/** The spec's JobStep (a job's `step`); variants nest as JobSteps whose `_parentId` is the step. */
export function toJobStep(step: WorkflowStep | Omit<WorkflowStep, 'variants'>, parentId: string | null = null): JobStep {
  // A code-first step names itself for the worker, which then asks the bridge for its content.
  const bridge = step.bridge ? { bridgeStepId: step.stepId, bridgeType: step.bridge.type } : undefined;
  const metadata = bridge ? { ...(stepMetadata(step) ?? {}), ...bridge } : stepMetadata(step);
  const variants = 'variants' in step && step.variants?.length ? step.variants.map((variant) => toJobStep(variant, step._id)) : undefined;
  return {
    _id: step._id,
    active: step.active,
    filters: step.filters,
    _templateId: step._id,
    name: step.name,
    _parentId: parentId,
    template: { type: step.type, ...step.controls },
    controlVariables: { ...step.controls },
    ...(metadata ? { metadata } : {}),
    ...(variants ? { variants } : {}),
  };
}
