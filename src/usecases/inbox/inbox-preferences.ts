import { NotFoundError } from '../../domain/errors.js';
import type { DeliverySchedule } from '../../domain/delivery-schedule.js';
import type { Severity, Subscriber, SubscriberCaller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { getSubscriberPreferences, type Criticality } from '../preferences/get-subscriber-preferences.js';
import type { GlobalPreferenceView, WorkflowPreferenceView } from '../preferences/preference-view.js';
import { updateGlobalPreference } from '../preferences/update-global-preference.js';
import { updateWorkflowPreferences, type WorkflowPreferenceChange } from '../preferences/update-workflow-preferences.js';

/**
 * The Inbox's preference routes over the subscriber-preferences model (src/usecases/preferences): the same records
 * and merge rules as the server API, for the caller's own subscriber.
 */

async function ownSubscriber(deps: Deps, caller: SubscriberCaller): Promise<Subscriber> {
  const subscriber = await deps.store.subscribers.get(caller.environmentId, caller.subscriberRecordId);
  if (!subscriber || subscriber.deleted) throw NotFoundError.subscriber(caller.subscriberId);
  return subscriber;
}

export interface InboxPreferencesQuery {
  criticality?: Criticality;
  /** Workflows with any of these tags. */
  tags?: string[];
  /** Workflows of these severities. */
  severity?: Severity[];
}

export async function listInboxPreferences(
  deps: Deps,
  input: { caller: SubscriberCaller } & InboxPreferencesQuery,
): Promise<{ global: GlobalPreferenceView; workflows: WorkflowPreferenceView[] }> {
  const subscriber = await ownSubscriber(deps, input.caller);
  const view = await getSubscriberPreferences(deps, { environmentId: input.caller.environmentId, subscriber, criticality: input.criticality });
  const workflows = view.workflows.filter(
    ({ workflow }) =>
      (!input.tags?.length || input.tags.some((tag) => workflow.tags.includes(tag))) && (!input.severity?.length || input.severity.includes(workflow.severity)),
  );
  return { global: view.global, workflows };
}

export async function updateInboxGlobalPreference(
  deps: Deps,
  input: { caller: SubscriberCaller; channels: Record<string, boolean>; schedule?: DeliverySchedule | null; enabled?: boolean },
): Promise<GlobalPreferenceView> {
  const subscriber = await ownSubscriber(deps, input.caller);
  const view = await updateGlobalPreference(deps, { environmentId: input.caller.environmentId, subscriber, channels: input.channels, schedule: input.schedule, enabled: input.enabled });
  return view.global;
}

export async function updateInboxWorkflowPreferences(
  deps: Deps,
  input: { caller: SubscriberCaller; changes: WorkflowPreferenceChange[]; fieldPath?: string },
): Promise<WorkflowPreferenceView[]> {
  const subscriber = await ownSubscriber(deps, input.caller);
  return updateWorkflowPreferences(deps, { environmentId: input.caller.environmentId, subscriber, changes: input.changes, fieldPath: input.fieldPath });
}
