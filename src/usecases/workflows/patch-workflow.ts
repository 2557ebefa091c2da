import { isoNow } from '../../domain/clock.js';
import type { Caller, Severity } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';
import { withDomainEvents } from '../events/record-domain-events.js';
import { workflowEvent } from '../../domain/webhooks.js';
import { getWorkflow } from './get-workflow.js';
import { checkPayloadSchema } from './workflow-input.js';
import { refuseExternalEdit } from './external-origin.js';
import { announceWorkflowsChanged } from './announce-workflows-changed.js';

export interface PatchWorkflowInput {
  caller: Caller;
  workflowIdOrId: string;
  active?: boolean;
  name?: string;
  description?: string;
  tags?: string[];
  /** `null` removes the schema. */
  payloadSchema?: Record<string, unknown> | null;
  severity?: Severity;
  critical?: boolean;
}

/** PATCH: only the given fields change. */
export async function patchWorkflow(deps: Deps, input: PatchWorkflowInput): Promise<Workflow> {
  const current = await getWorkflow(deps, { caller: input.caller, workflowId: input.workflowIdOrId });
  refuseExternalEdit(current, (['name', 'description', 'tags', 'payloadSchema', 'severity', 'critical'] as const).filter((field) => input[field] !== undefined));
  if (input.payloadSchema !== undefined) checkPayloadSchema(input.payloadSchema);
  const { payloadSchema: currentSchema, ...rest } = current;
  const payloadSchema = input.payloadSchema === undefined ? currentSchema : (input.payloadSchema ?? undefined);
  const active = input.active ?? current.active;
  const workflow: Workflow = {
    ...rest,
    active,
    draft: !active,
    name: input.name ?? current.name,
    description: input.description ?? current.description,
    tags: input.tags ?? current.tags,
    severity: input.severity ?? current.severity,
    critical: input.critical ?? current.critical,
    ...(payloadSchema ? { payloadSchema } : {}),
    updatedAt: isoNow(deps.clock),
  };
  await withDomainEvents(deps.store, input.caller.environmentId, async (tx, events) => {
    await tx.workflows.save(workflow);
    events.push(workflowEvent('workflow.updated', workflow, current));
  });
  await announceWorkflowsChanged(deps, input.caller.environmentId);
  return workflow;
}
