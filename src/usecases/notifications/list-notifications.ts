import { ValidationError } from '../../domain/errors.js';
import type { Caller, KeptEventText, NotificationEvent, Page } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import type { NotificationListFilter } from '../../store/ports.js';
import { validateContextKeyFilter } from '../messages/context-key-filter.js';
import { parseIsoTimestamp } from './iso-timestamp.js';
import { withPresentableJobs } from './presentable-jobs.js';

/**
 * The filters of GET /v1/notifications as the store takes them, from the caller's point of view:
 * `after`/`before` are ISO 8601 strings (default: none, or the retention window; and the time of the request).
 */
export interface ListNotificationsInput extends NotificationListFilter {
  caller: Caller;
}

/** What the list reads besides its input (a reader thread builds these alone: src/readers/). */
export type ListNotificationsDeps = Pick<Deps, 'store' | 'clock'> & { config: Pick<Deps['config'], 'activityRetentionDays'> };

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The environment's events newest first, each with its jobs and their execution details; an event whose list text
 * was kept (keepEventText) comes as that text.
 */
export async function listNotifications(deps: ListNotificationsDeps, input: ListNotificationsInput): Promise<Page<NotificationEvent | KeptEventText>> {
  const { caller, after, before, contextKeys, ...filter } = input;
  const now = deps.clock.now();
  const problems: string[] = [];
  const afterIso = after === undefined ? defaultAfter(deps, now) : parseIsoTimestamp(after);
  const beforeIso = before === undefined ? new Date(now).toISOString() : parseIsoTimestamp(before);
  if (afterIso === undefined && after !== undefined) problems.push('after must be an ISO 8601 date-time');
  if (beforeIso === undefined) problems.push('before must be an ISO 8601 date-time');
  if (problems.length === 0 && after !== undefined && before !== undefined && afterIso! > beforeIso!) {
    problems.push('after must not be later than before');
  }
  if (problems.length > 0) throw new ValidationError(problems);
  const page = await deps.store.notifications.listWithTexts(caller.environmentId, {
    ...filter,
    contextKeys: validateContextKeyFilter(contextKeys),
    after: afterIso,
    before: beforeIso,
  });
  for (const event of page.data) if (!('keptText' in event)) withPresentableJobs(event);
  return page;
}

function defaultAfter(deps: ListNotificationsDeps, now: number): string | undefined {
  const days = deps.config.activityRetentionDays;
  return days === undefined ? undefined : new Date(now - days * DAY_MS).toISOString();
}
