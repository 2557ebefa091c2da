import { ValidationError } from '../../domain/errors.js';
import type { DeliverySchedule } from '../../domain/delivery-schedule.js';
import type { Deps } from '../deps.js';
import { readPreferences, type Criticality } from './get-subscriber-preferences.js';
import type { PreferenceSubject } from './preference-subject.js';
import type { SubscriberPreferencesView } from './preference-view.js';
import { updateGlobalPreference } from './update-global-preference.js';
import { updateWorkflowPreferences } from './update-workflow-preferences.js';

export type PatchSubscriberPreferencesInput = PreferenceSubject & {
  channels?: Record<string, boolean>;
  /** The workflow's `_id` or identifier: its record changes; absent: the global record changes. */
  workflowId?: string;
  /** Global only; null removes it. */
  schedule?: DeliverySchedule | null;
  criticality?: Criticality;
};

/**
 * Novu v2's one PATCH for both levels: with `workflowId` the subscriber's record for that workflow, without it the
 * global record (channels and schedule). Answers all of the subscriber's preferences as now stored.
 */
export async function patchSubscriberPreferences(deps: Deps, input: PatchSubscriberPreferencesInput): Promise<SubscriberPreferencesView> {
  const { workflowId, channels, schedule, criticality, ...subject } = input;
  if (workflowId === undefined) return updateGlobalPreference(deps, { ...subject, channels, schedule, criticality });
  if (schedule !== undefined) throw new ValidationError(['schedule can only be set on the global preference (send it without workflowId)']);
  await updateWorkflowPreferences(deps, { ...subject, changes: [{ workflowId, channels }] });
  return readPreferences(deps.store, { ...subject, criticality });
}
