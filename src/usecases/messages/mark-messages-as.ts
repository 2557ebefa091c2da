import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, MarkAs, Message } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { withSubscribers } from './with-subscribers.js';
import { messageActionEventType, messageEvent } from '../../domain/webhooks.js';

export interface MarkMessagesAsInput {
  caller: Caller;
  /** External subscriberId. */
  subscriberId: string;
  messageId: string | string[];
  /** One mark, or several applied in order in the same transaction (the legacy `{ mark: { read, seen } }`). */
  markAs: MarkAs | MarkAs[];
}

/**
 * Marks the subscriber's in-app messages. All or nothing: every id must be one of the subscriber's
 * non-deleted in-app messages, checked before any write in the same transaction; the first that is not
 * is a 404 naming it. The subscriber's Inbox hears of the change once it is committed.
 */
export async function markMessagesAs(deps: Deps, input: MarkMessagesAsInput): Promise<Message[]> {
  const ids = [...new Set(Array.isArray(input.messageId) ? input.messageId : [input.messageId])];
  const marks = Array.isArray(input.markAs) ? input.markAs : [input.markAs];
  const environmentId = input.caller.environmentId;
  const { messages, subscriberRecordId } = await deps.store.transaction(async (store) => {
    const subscriber = await store.subscribers.findBySubscriberId(environmentId, input.subscriberId);
    if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
    const before = await store.messages.findInAppForSubscriber(environmentId, subscriber._id, ids);
    const found = new Set(before.map((m) => m._id));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw NotFoundError.entity('Message', missing);
    const at = isoNow(deps.clock);
    let updated: Message[] = [];
    const wanted = await store.events.wanted(environmentId);
    let previous = new Map(before.map((m) => [m._id, m]));
    for (const mark of marks) {
      updated = await store.messages.markAs(environmentId, ids, mark, at);
      const type = messageActionEventType(mark);
      if (wanted && type) {
        // One event per message per mark, with the record before it; recorded in this transaction.
        const events = updated.map((m) => messageEvent(type, m, { previous: previous.get(m._id), subscriberId: subscriber.subscriberId }));
        await store.events.record(environmentId, events);
        previous = new Map(updated.map((m) => [m._id, m]));
      }
    }
    return { messages: await withSubscribers(store, environmentId, updated), subscriberRecordId: subscriber._id };
  });
  // After the commit: the subscriber's open Inboxes get their new counts.
  deps.realtime.messagesChanged({ environmentId, subscriberRecordId });
  return messages;
}
