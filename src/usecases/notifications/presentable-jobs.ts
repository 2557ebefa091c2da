import { presentedProviderId } from '../../domain/job-provider.js';
import type { NotificationEvent } from '../../domain/types.js';

/**
 * Jobs stored before providers were planned at creation carry an empty providerId, which Novu clients reject (a
 * closed enum): they are shown with their step type's fallback. The event is the store's fresh copy, changed in place.
 */
export function withPresentableJobs(event: NotificationEvent): NotificationEvent {
  for (const job of event.jobs ?? []) job.providerId = presentedProviderId(job);
  return event;
}
