import { NotFoundError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller, NotificationEvent } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { withPresentableJobs } from './presentable-jobs.js';

export interface GetNotificationInput {
  caller: Caller;
  notificationId: string;
}

/** One event with its jobs, each with its execution details. */
export async function getNotification(deps: Deps, input: GetNotificationInput): Promise<NotificationEvent> {
  const event = isRecordId(input.notificationId)
    ? await deps.store.notifications.get(input.caller.environmentId, input.notificationId)
    : undefined;
  if (!event) throw NotFoundError.entity('Notification', input.notificationId);
  return withPresentableJobs(event);
}
