import { createHash } from 'node:crypto';

/**
 * Herald has one notification group per environment ("General"); its id is derived from the
 * environment id so every workflow of the environment carries the same `_notificationGroupId`
 * without a groups table.
 */
export function notificationGroupIdFor(environmentId: string): string {
  return createHash('sha256').update(`notification-group:${environmentId}`).digest('hex').slice(0, 24);
}
