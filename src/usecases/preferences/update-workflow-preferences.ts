import { isoNow } from '../../domain/clock.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { channelSwitchesFrom, isLockedWorkflow, withChannels, type WorkflowPreference } from '../../domain/preferences.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { preferenceEvent } from '../../domain/webhooks.js';
import { subscriberOf, type PreferenceSubject } from './preference-subject.js';
import { workflowView, type WorkflowPreferenceView } from './preference-view.js';

export interface WorkflowPreferenceChange {
  /** The workflow's `_id` or its identifier (workflowId). */
  workflowId: string;
  /** in_app, email, sms, chat, push (`tool` ignored); absent ones unchanged. */
  channels?: Record<string, boolean>;
  /** false switches the whole workflow off for the subscriber; true undoes that. */
  enabled?: boolean;
}

export type UpdateWorkflowPreferencesInput = PreferenceSubject & {
  changes: WorkflowPreferenceChange[];
  /** Field path of the changes in validation messages (`preferences` for the bulk body). */
  fieldPath?: string;
};

/**
 * Writes the subscriber's preference for one or more workflows, all or nothing: an unknown or deleted workflow is a
 * NotFoundError, a critical or read-only one a ValidationError, and then nothing is written. Answers the merged
 * preference of each workflow changed, in the order given (a workflow named twice: once, with both changes applied).
 */
export async function updateWorkflowPreferences(deps: Deps, input: UpdateWorkflowPreferencesInput): Promise<WorkflowPreferenceView[]> {
  return deps.store.transaction(async (store) => {
    const subscriber = await subscriberOf(store, input);
    const workflows = await resolveWorkflows(store, input);
    const records = await store.preferences.listForSubscriber(input.environmentId, subscriber._id);
    const at = isoNow(deps.clock);
    const changed = new Map<string, { workflow: Workflow; record: WorkflowPreference }>();
    input.changes.forEach((change, index) => {
      const workflow = workflows[index];
      const current = changed.get(workflow._id)?.record ?? records.workflows[workflow._id] ?? { channels: {} };
      let record: WorkflowPreference = withChannels(current, channelSwitchesFrom(change.channels, 'channels').switches);
      if (change.enabled !== undefined) record = { ...record, enabled: change.enabled };
      changed.set(workflow._id, { workflow, record });
    });
    for (const { workflow, record } of changed.values()) {
      const { updatedAt: _old, ...stored } = record;
      await store.preferences.saveWorkflow(input.environmentId, subscriber._id, workflow._id, stored, at);
      const previous = records.workflows[workflow._id];
      await store.events.record(input.environmentId, [
        preferenceEvent({ environmentId: input.environmentId, subscriber, level: 'workflow', workflow, preference: { ...stored }, previous: previous ? { ...previous } : undefined, updatedAt: at }),
      ]);
    }
    return [...changed.values()].map(({ workflow, record }) => workflowView(workflow, records.global, { ...record, updatedAt: at }));
  });
}

async function resolveWorkflows(store: Store, input: UpdateWorkflowPreferencesInput): Promise<Workflow[]> {
  const problems: string[] = [];
  const workflows: Workflow[] = [];
  for (const [index, change] of input.changes.entries()) {
    const channelsPath = input.fieldPath ? `${input.fieldPath}[${index}].channels` : 'channels';
    problems.push(...channelSwitchesFrom(change.channels, channelsPath).problems);
    const workflow = await store.workflows.get(input.environmentId, change.workflowId);
    if (!workflow) throw NotFoundError.entity('Workflow', change.workflowId);
    const field = input.fieldPath ? `${input.fieldPath}[${index}].workflowId` : 'workflowId';
    if (isLockedWorkflow(workflow)) {
      problems.push(`${field}: workflow ${change.workflowId} is ${workflow.critical ? 'critical' : 'read-only'}; its preferences cannot be changed`);
    }
    workflows.push(workflow);
  }
  if (problems.length) throw new ValidationError(problems);
  return workflows;
}
