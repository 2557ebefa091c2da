import { isoNow } from '../../domain/clock.js';
import { ConflictError } from '../../domain/errors.js';
import type { Caller, Severity } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';
import { withDomainEvents } from '../events/record-domain-events.js';
import { workflowEvent } from '../../domain/webhooks.js';
import { getWorkflow } from './get-workflow.js';
import { refuseExternalEdit } from './external-origin.js';
import { buildSteps, checkPayloadSchema, preferenceSettingsFrom, type PreferencesInput, type StepInput } from './workflow-input.js';
import { announceWorkflowsChanged } from './announce-workflows-changed.js';

export interface UpdateWorkflowInput {
  caller: Caller;
  /** Path id: `_id` or workflowId. */
  workflowIdOrId: string;
  name: string;
  steps: StepInput[];
  /** A new workflowId (must be free in the environment). */
  workflowId?: string;
  description?: string;
  tags?: string[];
  active?: boolean;
  preferences?: PreferencesInput;
  payloadSchema?: Record<string, unknown> | null;
  severity?: Severity;
  critical?: boolean;
  data?: Record<string, unknown>;
}

/**
 * PUT: each given field replaces the stored one as a whole (steps, preferences, tags, ...); fields not
 * given keep their value. Steps sent with their `_id` (or an existing stepId) keep their identity.
 */
export async function updateWorkflow(deps: Deps, input: UpdateWorkflowInput): Promise<Workflow> {
  const { caller } = input;
  const current = await getWorkflow(deps, { caller, workflowId: input.workflowIdOrId });
  refuseExternalEdit(current, ['steps']);
  if (input.payloadSchema !== undefined) checkPayloadSchema(input.payloadSchema);
  const steps = buildSteps(input.steps, current.steps);
  if (input.workflowId !== undefined && input.workflowId !== current.workflowId) {
    const holder = await deps.store.workflows.get(caller.environmentId, input.workflowId);
    if (holder && holder._id !== current._id) throw new ConflictError(`Workflow with workflowId ${input.workflowId} already exists`);
  }
  const preferences = input.preferences !== undefined ? preferenceSettingsFrom(input.preferences) : undefined;
  const active = input.active ?? current.active;
  const { payloadSchema: currentSchema, ...rest } = current;
  const payloadSchema = input.payloadSchema === undefined ? currentSchema : (input.payloadSchema ?? undefined);
  const workflow: Workflow = {
    ...rest,
    workflowId: input.workflowId ?? current.workflowId,
    name: input.name,
    description: input.description ?? current.description,
    tags: input.tags ?? current.tags,
    active,
    draft: !active,
    critical: input.critical ?? preferences?.readOnly ?? current.critical,
    severity: input.severity ?? current.severity,
    preferenceSettings: preferences?.preferenceSettings ?? current.preferenceSettings,
    // PUT replaces the preferences as a whole: read-only only if the new ones say so.
    ...(preferences ? { readOnly: preferences.readOnly ?? false } : {}),
    ...(payloadSchema ? { payloadSchema } : {}),
    steps,
    ...(input.data !== undefined ? { data: input.data } : {}),
    updatedAt: isoNow(deps.clock),
  };
  await withDomainEvents(deps.store, caller.environmentId, async (tx, events) => {
    await tx.workflows.save(workflow);
    events.push(workflowEvent('workflow.updated', workflow, current));
  });
  await announceWorkflowsChanged(deps, caller.environmentId);
  return workflow;
}
