import type { StoredJob } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { TERMINAL_JOB_STATUSES } from '../engine/job-progress.js';
import { withPresentableJobs } from './presentable-jobs.js';

/**
 * After a step ended with nothing left to run after it: if every job of its event has ended, keeps the event's list
 * text (the page of GET /v1/notifications then writes it as it is, reading no jobs or details). Only an optimisation:
 * where it is not kept (the store keeps no texts, or keeping failed) the page assembles the event. Where the store
 * holds its writes (a trigger's first step), it is written with them when the store holds the event (rendered from the
 * held records), otherwise once they are written.
 */
export async function keepEventText(deps: Deps, job: StoredJob): Promise<void> {
  const render = deps.eventListText;
  if (!render || !TERMINAL_JOB_STATUSES.has(job.status)) return;
  const keep = () =>
    deps.store.notifications.keepText(job._environmentId, job._notificationId, (event) =>
      event.jobs?.length && event.jobs.every((sibling) => TERMINAL_JOB_STATUSES.has(sibling.status)) ? render(withPresentableJobs(event)) : undefined,
    );
  if (deps.store.holdsWrites) {
    // The event and its jobs are not in the database yet (a trigger's first step, Store.batch): kept with them where
    // the store holds the event itself, otherwise once they are written.
    if (deps.store.notifications.keepsTextWithHeldWrites?.(job._environmentId, job._notificationId)) await keep();
    else deps.afterHeldWrites?.((unheld) => keepEventText(unheld, job));
    return;
  }
  const failed = (error: unknown) => deps.logger.warn({ err: error, notificationId: job._notificationId }, 'the event list text could not be kept');
  try {
    const kept = keep();
    // Gathered over a window (PostgreSQL): the job does not wait for it (session 15: jobs that waited 10 ms for their
    // keeping cut the deliveries' rate).
    if (deps.store.notifications.keepsTextsOverWindow) kept.catch(failed);
    else await kept;
  } catch (error) {
    failed(error);
  }
}
