/**
 * Subscriber preferences: which channels of which workflow a subscriber receives. Pure rules, no storage.
 *
 * Three levels, lowest to highest: the workflow's defaults (its `preferences`: per channel on/off), the subscriber's
 * global preference (per channel, `enabled`, and a delivery schedule), the subscriber's preference for one workflow
 * (per channel and `enabled`). A higher level decides a channel only where it says something about it. A workflow
 * that is `critical` is always delivered on every channel; one whose preferences are `readOnly` follows its own
 * defaults. Either way the subscriber's choices are ignored.
 */
import { DELIVERY_CHANNELS, type DeliveryChannel } from './types.js';
import type { DeliverySchedule } from './delivery-schedule.js';
import type { Workflow } from './workflow.js';

export type ChannelSwitches = Partial<Record<DeliveryChannel, boolean>>;

/** The subscriber's global record: channel switches, an optional `enabled` (false = every channel off) and schedule. */
export interface GlobalPreference {
  enabled?: boolean;
  channels: ChannelSwitches;
  schedule?: DeliverySchedule;
  updatedAt?: string;
}

/** The subscriber's record for one workflow: channel switches and an optional `enabled` (false = every channel off). */
export interface WorkflowPreference {
  enabled?: boolean;
  channels: ChannelSwitches;
  updatedAt?: string;
}

/** What a workflow itself says about preferences. */
export interface WorkflowDefaults {
  /** Channels the workflow sends by default; a channel not listed is on. */
  channels: ChannelSwitches;
  /** Subscribers cannot change this workflow's channels (`preferences.all.readOnly`). */
  readOnly: boolean;
  /** Always delivered: neither defaults nor subscriber choices nor schedules hold it back. */
  critical: boolean;
}

/** Which level decided a channel. */
export type PreferenceLevel = 'critical' | 'workflow_default' | 'subscriber_global' | 'subscriber_workflow';

export interface ChannelDecision {
  enabled: boolean;
  level: PreferenceLevel;
}

/** Whether `channel` is delivered for this workflow and subscriber, and which level decided it. */
export function decideChannel(
  channel: DeliveryChannel,
  defaults: WorkflowDefaults,
  global: GlobalPreference | undefined,
  workflow: WorkflowPreference | undefined,
): ChannelDecision {
  if (defaults.critical) return { enabled: true, level: 'critical' };
  let decision: ChannelDecision = { enabled: defaults.channels[channel] ?? true, level: 'workflow_default' };
  if (defaults.readOnly) return decision;
  decision = applyLevel(decision, global, channel, 'subscriber_global');
  return applyLevel(decision, workflow, channel, 'subscriber_workflow');
}

function applyLevel(
  decision: ChannelDecision,
  record: { enabled?: boolean; channels: ChannelSwitches } | undefined,
  channel: DeliveryChannel,
  level: PreferenceLevel,
): ChannelDecision {
  if (!record) return decision;
  const value = record.channels[channel];
  // `enabled: false` switches the whole level off, whatever its channels say.
  if (record.enabled === false) return { enabled: false, level };
  return value === undefined ? decision : { enabled: value, level };
}

/** Every delivery channel decided at once (for read-back). */
export function decideChannels(
  channels: readonly DeliveryChannel[],
  defaults: WorkflowDefaults,
  global: GlobalPreference | undefined,
  workflow: WorkflowPreference | undefined,
): Record<DeliveryChannel, ChannelDecision> {
  return Object.fromEntries(channels.map((channel) => [channel, decideChannel(channel, defaults, global, workflow)])) as Record<
    DeliveryChannel,
    ChannelDecision
  >;
}

/**
 * The global preference as read back: every channel listed, on unless the subscriber turned it off globally.
 * (Workflow defaults do not apply at this level.)
 */
export function effectiveGlobalChannels(global: GlobalPreference | undefined): Record<DeliveryChannel, boolean> {
  return Object.fromEntries(
    DELIVERY_CHANNELS.map((channel) => [channel, global?.enabled === false ? false : (global?.channels[channel] ?? true)]),
  ) as Record<DeliveryChannel, boolean>;
}

/** Applies a write of channel switches to a record (absent keys unchanged). */
export function withChannels<T extends { channels: ChannelSwitches }>(record: T, changes: ChannelSwitches): T {
  const channels = { ...record.channels };
  for (const channel of DELIVERY_CHANNELS) if (changes[channel] !== undefined) channels[channel] = changes[channel];
  return { ...record, channels };
}

/**
 * Writing a global channel value removes that channel from every per-workflow record of the subscriber, so the
 * latest global change takes effect everywhere until the subscriber edits a workflow again (Novu does the same).
 * Returns the records that changed.
 */
export function withoutGlobalChannels<T extends { channels: ChannelSwitches }>(records: readonly T[], written: ChannelSwitches): T[] {
  const removed = DELIVERY_CHANNELS.filter((channel) => written[channel] !== undefined);
  if (removed.length === 0) return [];
  const changed: T[] = [];
  for (const record of records) {
    if (!removed.some((channel) => record.channels[channel] !== undefined)) continue;
    const channels = { ...record.channels };
    for (const channel of removed) delete channels[channel];
    changed.push({ ...record, channels });
  }
  return changed;
}

/** How a channel's decision is named in an execution detail. */
export function describeLevel(level: PreferenceLevel): string {
  switch (level) {
    case 'critical':
      return 'the workflow is critical';
    case 'workflow_default':
      return "the workflow's default preferences";
    case 'subscriber_global':
      return "the subscriber's global preferences";
    case 'subscriber_workflow':
      return "the subscriber's preferences for this workflow";
  }
}

/** A workflow's own say: its channel defaults, `readOnly`, `critical`. */
export function workflowDefaultsOf(workflow: Pick<Workflow, 'preferenceSettings' | 'readOnly' | 'critical'>): WorkflowDefaults {
  return { channels: workflow.preferenceSettings, readOnly: workflow.readOnly ?? false, critical: workflow.critical };
}

/** Critical or read-only: the workflow's channels are not the subscriber's to change. */
export function isLockedWorkflow(workflow: Pick<Workflow, 'readOnly' | 'critical'>): boolean {
  return workflow.critical || workflow.readOnly === true;
}

/** Channel names Novu clients may send that Herald has no channel for; accepted and ignored. */
const IGNORED_CHANNELS = new Set(['tool']);

/**
 * Channel switches from a request (`{ email: false, in_app: true }`): the delivery channels kept, Novu's `tool`
 * ignored, any other name a problem naming `path.<name>`.
 */
export function channelSwitchesFrom(raw: Record<string, boolean> | undefined, path: string): { switches: ChannelSwitches; problems: string[] } {
  const switches: ChannelSwitches = {};
  const problems: string[] = [];
  for (const [name, value] of Object.entries(raw ?? {})) {
    if ((DELIVERY_CHANNELS as readonly string[]).includes(name)) switches[name as DeliveryChannel] = value;
    else if (!IGNORED_CHANNELS.has(name)) problems.push(`${path}.${name} is not a channel (in_app, email, sms, chat, push)`);
  }
  return { switches, problems };
}
