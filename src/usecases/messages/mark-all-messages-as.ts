import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, MarkAs, Message } from '../../domain/types.js';
import type { InboxCursor, Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { messageActionEventType, messageEvent } from '../../domain/webhooks.js';

export interface MarkAllMessagesAsInput {
  caller: Caller;
  /** External subscriberId. */
  subscriberId: string;
  markAs: MarkAs;
  /**
   * Novu's feed identifiers: only messages of those feeds. Herald has no feed entities: an in-app step names its feed
   * with the `feedIdentifier` control, which its messages carry as `_feedId` (docs/legacy-widget.md).
   */
  feedIdentifiers?: string[];
}

/** Marks every in-app message of the subscriber; answers how many changed (those already so are not counted). */
export async function markAllMessagesAs(deps: Deps, input: MarkAllMessagesAsInput): Promise<number> {
  const environmentId = input.caller.environmentId;
  const { changed, subscriberRecordId } = await deps.store.transaction(async (store) => {
    const subscriber = await store.subscribers.findBySubscriberId(environmentId, input.subscriberId);
    if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
    const at = isoNow(deps.clock);
    const type = messageActionEventType(input.markAs);
    if (input.feedIdentifiers && input.feedIdentifiers.length > 0) {
      const ids = await idsInFeeds(store, environmentId, subscriber._id, input.feedIdentifiers, input.markAs);
      const updated = ids.length ? await store.messages.markAs(environmentId, ids, input.markAs, at) : [];
      if (type && updated.length) await store.events.record(environmentId, updated.map((m) => messageEvent(type, m, { subscriberId: subscriber.subscriberId })));
      return { changed: updated.length, subscriberRecordId: subscriber._id };
    }
    if (!type || !(await store.events.wanted(environmentId))) {
      const changed = await store.messages.markAllInApp(environmentId, subscriber, input.markAs, at);
      return { changed, subscriberRecordId: subscriber._id };
    }
    const updated = await store.messages.markAllInAppMessages(environmentId, subscriber, input.markAs, at);
    await store.events.record(environmentId, updated.map((m) => messageEvent(type, m, { subscriberId: subscriber.subscriberId })));
    return { changed: updated.length, subscriberRecordId: subscriber._id };
  });
  if (changed > 0) deps.realtime.messagesChanged({ environmentId, subscriberRecordId });
  return changed;
}

/** The subscriber's in-app messages of these feeds that the mark would change (`read` also sets seen). */
async function idsInFeeds(store: Store, environmentId: string, subscriberRecordId: string, feeds: string[], markAs: MarkAs): Promise<string[]> {
  const changes = (message: Message) =>
    markAs === 'read' ? !message.read || !message.seen : markAs === 'seen' ? !message.seen : markAs === 'unread' ? message.read : message.seen;
  const ids: string[] = [];
  let after: InboxCursor | undefined;
  for (;;) {
    const page = await store.messages.listInbox(environmentId, subscriberRecordId, { feeds }, { after, offset: 0, limit: 200 });
    for (const message of page.data) if (changes(message)) ids.push(message._id);
    if (!page.hasMore || page.data.length === 0) return ids;
    const last = page.data[page.data.length - 1];
    after = { createdAt: last.createdAt, id: last._id };
  }
}
