import type { Message } from '../domain/types.js';

/**
 * Whose Inbox an event is for: the environment and the subscriber record's `_id` (the internal id a message's
 * `_subscriberId` holds, never the caller-chosen subscriberId, which a deleted and recreated subscriber reuses).
 */
export interface InboxAudience {
  environmentId: string;
  subscriberRecordId: string;
}

/**
 * What use-cases and worker steps call after a write that changes a subscriber's Inbox is durable
 * (ARCHITECTURE.md, realtime). Fire and forget: an implementation never throws into its caller and never
 * blocks it on a socket; a subscriber with no socket open costs (next to) nothing.
 *
 * Implementations turn these into the socket events of the inbox protocol: `notification_received`,
 * `unread_count_changed`, `unseen_count_changed` (counts are read by the implementation, not the caller).
 */
export interface RealtimeNotifier {
  /** An in-app message reached the subscriber's Inbox: created by a step, or back from a snooze. */
  messageDelivered(audience: InboxAudience, message: Message): void;
  /** The subscriber's in-app messages changed state (read, seen, archived, snoozed, deleted, actions): counts change. */
  messagesChanged(audience: InboxAudience): void;
  /**
   * The subscriber's own record changed (the profile the Inbox shows with each notification) or was deleted. No
   * socket event; it only makes the API process's kept Inbox answers stale (http/inbox-read-cache.ts).
   */
  subscriberChanged(audience: InboxAudience): void;
}

/** An Inbox event as it travels from a notifier to whatever holds the subscriber's sockets. */
export type InboxEvent =
  | { kind: 'message-delivered'; audience: InboxAudience; message: Message }
  | { kind: 'messages-changed'; audience: InboxAudience }
  | { kind: 'subscriber-changed'; audience: InboxAudience };
