import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, MarkAs } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { messageActionEventType, messageEvent } from '../../domain/webhooks.js';

export interface MarkAllMessagesAsInput {
  caller: Caller;
  /** External subscriberId. */
  subscriberId: string;
  markAs: MarkAs;
  /**
   * Novu's feed identifiers: only messages of those feeds. Herald has no feeds (no message belongs to one), so a
   * non-empty list matches nothing, as a Novu identifier naming no feed does.
   */
  feedIdentifiers?: string[];
}

/** Marks every in-app message of the subscriber; answers how many changed (those already so are not counted). */
export async function markAllMessagesAs(deps: Deps, input: MarkAllMessagesAsInput): Promise<number> {
  const environmentId = input.caller.environmentId;
  const { changed, subscriberRecordId } = await deps.store.transaction(async (store) => {
    const subscriber = await store.subscribers.findBySubscriberId(environmentId, input.subscriberId);
    if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
    if (input.feedIdentifiers && input.feedIdentifiers.length > 0) return { changed: 0, subscriberRecordId: subscriber._id };
    const type = messageActionEventType(input.markAs);
    if (!type || !(await store.events.wanted(environmentId))) {
      const changed = await store.messages.markAllInApp(environmentId, subscriber, input.markAs, isoNow(deps.clock));
      return { changed, subscriberRecordId: subscriber._id };
    }
    const updated = await store.messages.markAllInAppMessages(environmentId, subscriber, input.markAs, isoNow(deps.clock));
    await store.events.record(environmentId, updated.map((m) => messageEvent(type, m, { subscriberId: subscriber.subscriberId })));
    return { changed: updated.length, subscriberRecordId: subscriber._id };
  });
  if (changed > 0) deps.realtime.messagesChanged({ environmentId, subscriberRecordId });
  return changed;
}
