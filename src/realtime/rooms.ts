import type { InboxAudience } from './ports.js';

/**
 * The socket.io room of one subscriber's Inbox: every socket a subscriber opens (tabs, devices, API processes) joins
 * it, and every event for that subscriber is emitted to it. Keyed by the subscriber record's `_id`, which a deleted
 * and recreated subscriber does not reuse.
 */
export function inboxRoom(audience: InboxAudience): string {
  return `inbox:${audience.environmentId}:${audience.subscriberRecordId}`;
}

/** Whether a value that crossed a process boundary (Redis) is an audience. */
export function isInboxAudience(value: unknown): value is InboxAudience {
  if (!value || typeof value !== 'object') return false;
  const { environmentId, subscriberRecordId } = value as Record<string, unknown>;
  return typeof environmentId === 'string' && environmentId !== '' && typeof subscriberRecordId === 'string' && subscriberRecordId !== '';
}
