import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, MarkAs, Message } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { withSubscribers } from './with-subscribers.js';

export interface MarkMessagesAsInput {
  caller: Caller;
  /** External subscriberId. */
  subscriberId: string;
  messageId: string | string[];
  markAs: MarkAs;
}

/**
 * Marks the subscriber's in-app messages. All or nothing: every id must be one of the subscriber's
 * non-deleted in-app messages, checked before any write in the same transaction; the first that is not
 * is a 404 naming it.
 */
export async function markMessagesAs(deps: Deps, input: MarkMessagesAsInput): Promise<Message[]> {
  const ids = [...new Set(Array.isArray(input.messageId) ? input.messageId : [input.messageId])];
  const environmentId = input.caller.environmentId;
  return deps.store.transaction(async (store) => {
    const subscriber = await store.subscribers.findBySubscriberId(environmentId, input.subscriberId);
    if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
    const found = new Set((await store.messages.findInAppForSubscriber(environmentId, subscriber._id, ids)).map((m) => m._id));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw NotFoundError.entity('Message', missing);
    const updated = await store.messages.markAs(environmentId, ids, input.markAs, isoNow(deps.clock));
    return withSubscribers(store, environmentId, updated);
  });
}
