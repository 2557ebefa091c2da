import { DELIVERY_CHANNELS, type DeliveryChannel } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { DeliverySchedule } from '../../domain/delivery-schedule.js';
import {
  decideChannels,
  effectiveGlobalChannels,
  isLockedWorkflow,
  workflowDefaultsOf,
  type GlobalPreference,
  type WorkflowPreference,
} from '../../domain/preferences.js';
import type { Subscriber } from '../../domain/types.js';

/**
 * Preferences as read back, before any wire format: the HTTP layer maps these to Novu's v1 rows and v2 objects
 * (src/http/schemas/preference.ts), the Inbox to its own.
 */
export interface GlobalPreferenceView {
  enabled: boolean;
  /** Every delivery channel. */
  channels: Record<DeliveryChannel, boolean>;
  schedule?: DeliverySchedule;
  updatedAt?: string;
}

/** Where a channel's value came from: the subscriber's choice (global or this workflow) or the workflow itself. */
export type OverrideSource = 'subscriber' | 'template';

export interface WorkflowPreferenceView {
  workflow: Workflow;
  /** False when the subscriber switched the whole workflow off. */
  enabled: boolean;
  /** The channels of the workflow's active steps, merged (see domain/preferences.ts). */
  channels: Partial<Record<DeliveryChannel, boolean>>;
  overrides: Array<{ channel: DeliveryChannel; source: OverrideSource }>;
  /** When the subscriber last wrote this workflow's record; absent when never. */
  updatedAt?: string;
}

export interface SubscriberPreferencesView {
  subscriber: Subscriber;
  global: GlobalPreferenceView;
  workflows: WorkflowPreferenceView[];
}

export function globalView(global: GlobalPreference | undefined): GlobalPreferenceView {
  return {
    enabled: global?.enabled ?? true,
    channels: effectiveGlobalChannels(global),
    ...(global?.schedule ? { schedule: global.schedule } : {}),
    ...(global?.updatedAt ? { updatedAt: global.updatedAt } : {}),
  };
}

/** The delivery channels a workflow's active steps use, in a stable order. */
export function workflowChannels(workflow: Workflow): DeliveryChannel[] {
  const used = new Set<string>(workflow.steps.filter((step) => step.active).map((step) => step.type));
  return DELIVERY_CHANNELS.filter((channel) => used.has(channel));
}

export function workflowView(workflow: Workflow, global: GlobalPreference | undefined, record: WorkflowPreference | undefined): WorkflowPreferenceView {
  const locked = isLockedWorkflow(workflow);
  const channels = workflowChannels(workflow);
  const decisions = decideChannels(channels, workflowDefaultsOf(workflow), global, record);
  return {
    workflow,
    enabled: locked ? true : (record?.enabled ?? true),
    channels: Object.fromEntries(channels.map((channel) => [channel, decisions[channel].enabled])),
    overrides: channels.map((channel) => ({
      channel,
      source: decisions[channel].level === 'subscriber_global' || decisions[channel].level === 'subscriber_workflow' ? 'subscriber' : 'template',
    })),
    ...(record?.updatedAt && !locked ? { updatedAt: record.updatedAt } : {}),
  };
}
