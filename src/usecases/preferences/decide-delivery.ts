import { checkSchedule, scheduleTimezone } from '../../domain/delivery-schedule.js';
import { decideChannel, describeLevel, workflowDefaultsOf } from '../../domain/preferences.js';
import type { DeliveryChannel, Subscriber } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';

export type DeliveryDecision =
  | { action: 'send' }
  | { action: 'skip'; detail: string }
  | { action: 'defer'; until: number; detail: string };

export interface DecideDeliveryInput {
  environmentId: string;
  subscriber: Subscriber;
  workflow: Workflow;
  channel: DeliveryChannel;
}

/**
 * Whether a channel step goes out now, is skipped (a channel turned off, or outside the schedule in skip mode) or is
 * held until the subscriber's schedule opens. Critical workflows are sent without reading anything; otherwise one
 * indexed read fetches the subscriber's global and workflow records. In-app steps ignore the schedule.
 */
export async function decideDelivery(deps: Deps, store: Store, input: DecideDeliveryInput): Promise<DeliveryDecision> {
  const { workflow, channel, subscriber } = input;
  const defaults = workflowDefaultsOf(workflow);
  if (defaults.critical) return { action: 'send' };
  // A read-only workflow's in-app step depends on nothing the subscriber set: no read.
  const records = defaults.readOnly && channel === 'in_app'
    ? {}
    : await store.preferences.getForDelivery(input.environmentId, subscriber._id, workflow._id);
  const decision = decideChannel(channel, defaults, records.global, records.workflow);
  if (!decision.enabled) {
    // The wording of the workflow-default case predates subscriber preferences; kept for readers of the details.
    const detail = decision.level === 'workflow_default'
      ? `Step skipped: the ${channel} channel is turned off in the workflow's preferences`
      : `Step skipped: the ${channel} channel is turned off in ${describeLevel(decision.level)}`;
    return { action: 'skip', detail };
  }
  const schedule = records.global?.schedule;
  if (channel === 'in_app' || !schedule?.isEnabled) return { action: 'send' };
  const timezone = scheduleTimezone(schedule, subscriber.timezone);
  const check = checkSchedule(schedule, deps.clock.now(), timezone);
  if (check.open) return { action: 'send' };
  if (check.opensAt === undefined) {
    return { action: 'skip', detail: `Step skipped: the subscriber's delivery schedule (${timezone}) has no open window` };
  }
  const opensAt = new Date(check.opensAt).toISOString();
  if (deps.config.scheduleOutsideWindow === 'skip') {
    return { action: 'skip', detail: `Step skipped: outside the subscriber's delivery schedule (${timezone}); the window next opens at ${opensAt}` };
  }
  return { action: 'defer', until: check.opensAt, detail: `Held until ${opensAt}: outside the subscriber's delivery schedule (${timezone})` };
}
