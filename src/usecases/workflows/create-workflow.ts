import { ConflictError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { isoNow } from '../../domain/clock.js';
import type { Caller, Severity } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';
import { withDomainEvents } from '../events/record-domain-events.js';
import { workflowEvent } from '../../domain/webhooks.js';
import { buildSteps, checkPayloadSchema, preferenceSettingsFrom, type PreferencesInput, type StepInput } from './workflow-input.js';
import { notificationGroupIdFor } from './notification-group.js';
import { announceWorkflowsChanged } from './announce-workflows-changed.js';

export interface CreateWorkflowInput {
  caller: Caller;
  workflowId: string;
  name: string;
  description?: string;
  tags?: string[];
  active?: boolean;
  steps: StepInput[];
  preferences?: PreferencesInput;
  payloadSchema?: Record<string, unknown> | null;
  severity?: Severity;
  critical?: boolean;
  data?: Record<string, unknown>;
}

/** Creates a workflow in the caller's environment; its workflowId must be free there (409). */
export async function createWorkflow(deps: Deps, input: CreateWorkflowInput): Promise<Workflow> {
  const { caller } = input;
  checkPayloadSchema(input.payloadSchema);
  const steps = buildSteps(input.steps);
  if (await deps.store.workflows.get(caller.environmentId, input.workflowId)) {
    throw new ConflictError(`Workflow with workflowId ${input.workflowId} already exists`);
  }
  const { preferenceSettings, readOnly } = preferenceSettingsFrom(input.preferences);
  const now = isoNow(deps.clock);
  const active = input.active ?? true;
  const workflow: Workflow = {
    _id: newId(deps.clock.now()),
    _environmentId: caller.environmentId,
    _organizationId: caller.organizationId,
    workflowId: input.workflowId,
    name: input.name,
    description: input.description ?? '',
    tags: input.tags ?? [],
    active,
    draft: !active,
    critical: input.critical ?? readOnly ?? false,
    severity: input.severity ?? 'none',
    preferenceSettings,
    ...(readOnly !== undefined ? { readOnly } : {}),
    ...(input.payloadSchema ? { payloadSchema: input.payloadSchema } : {}),
    steps,
    ...(input.data !== undefined ? { data: input.data } : {}),
    _notificationGroupId: notificationGroupIdFor(caller.environmentId),
    origin: 'novu-cloud',
    _creatorId: caller.actorId,
    deleted: false,
    createdAt: now,
    updatedAt: now,
  };
  await withDomainEvents(deps.store, caller.environmentId, async (tx, events) => {
    await tx.workflows.create(workflow);
    events.push(workflowEvent('workflow.created', workflow));
  });
  await announceWorkflowsChanged(deps, caller.environmentId);
  return workflow;
}
