import { isoNow } from '../../domain/clock.js';
import { scheduleProblems, type DeliverySchedule } from '../../domain/delivery-schedule.js';
import { ValidationError } from '../../domain/errors.js';
import { channelSwitchesFrom, withChannels, withoutGlobalChannels, type GlobalPreference } from '../../domain/preferences.js';
import type { Deps } from '../deps.js';
import { preferenceEvent } from '../../domain/webhooks.js';
import { subscriberOf, type PreferenceSubject } from './preference-subject.js';
import { readPreferences, type Criticality } from './get-subscriber-preferences.js';
import type { SubscriberPreferencesView } from './preference-view.js';

export type UpdateGlobalPreferenceInput = PreferenceSubject & {
  /** Channels to switch (in_app, email, sms, chat, push; `tool` ignored); absent ones unchanged. */
  channels?: Record<string, boolean>;
  /** false switches every channel off at the global level; true undoes that. */
  enabled?: boolean;
  /** Replaces the schedule; null removes it. */
  schedule?: DeliverySchedule | null;
  /** The workflows listed in the answer (default nonCritical). */
  criticality?: Criticality;
  /** Field path used in validation messages (the v2 body names it `schedule`). */
  schedulePath?: string;
};

/**
 * Writes the subscriber's global preference. Every channel written here is also removed from the subscriber's
 * per-workflow records (the global-wipes-workflow rule of domain/preferences.ts), in the same transaction.
 * Answers the subscriber's preferences as now stored.
 */
export async function updateGlobalPreference(deps: Deps, input: UpdateGlobalPreferenceInput): Promise<SubscriberPreferencesView> {
  const { switches, problems } = channelSwitchesFrom(input.channels, 'channels');
  if (input.schedule) problems.push(...scheduleProblems(input.schedule, input.schedulePath ?? 'schedule'));
  if (problems.length) throw new ValidationError(problems);
  return deps.store.transaction(async (store) => {
    const subscriber = await subscriberOf(store, input);
    const at = isoNow(deps.clock);
    const records = await store.preferences.listForSubscriber(input.environmentId, subscriber._id);
    let global: GlobalPreference = withChannels({ ...(records.global ?? { channels: {} }) }, switches);
    delete global.updatedAt;
    if (input.enabled !== undefined) global = { ...global, enabled: input.enabled };
    if (input.schedule === null) delete global.schedule;
    else if (input.schedule !== undefined) global = { ...global, schedule: input.schedule };
    await store.preferences.saveGlobal(input.environmentId, subscriber._id, global, at);
    await store.events.record(input.environmentId, [
      preferenceEvent({ environmentId: input.environmentId, subscriber, level: 'global', preference: { ...global }, previous: records.global ? { ...records.global } : undefined, updatedAt: at }),
    ]);
    const workflowIds = Object.keys(records.workflows);
    const wiped = withoutGlobalChannels(workflowIds.map((id) => ({ id, ...records.workflows[id] })), switches);
    for (const { id, updatedAt: _kept, ...record } of wiped) {
      await store.preferences.saveWorkflow(input.environmentId, subscriber._id, id, record, at);
    }
    return readPreferences(store, { environmentId: input.environmentId, subscriber, criticality: input.criticality });
  });
}
