import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, DeliveryChannel } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { messageEvent } from '../../domain/webhooks.js';

export interface DeleteTransactionMessagesInput {
  caller: Caller;
  transactionId: string;
  /** Only the messages of this channel. */
  channel?: DeliveryChannel;
}

/**
 * Soft-deletes every message of a trigger's transaction (of one channel when given); a transaction with no such
 * message is a 404, as in Novu. Each subscriber whose Inbox lost a message hears of it once the deletes are committed.
 */
export async function deleteTransactionMessages(deps: Deps, input: DeleteTransactionMessagesInput): Promise<number> {
  const environmentId = input.caller.environmentId;
  const at = isoNow(deps.clock);
  const deleted = await deps.store.transaction(async (store) => {
    // The records are read before the delete (deleted ones are not read back), only when an endpoint listens.
    const wanted = await store.events.wanted(environmentId);
    const before = wanted
      ? (await store.messages.list(environmentId, { transactionIds: [input.transactionId], channel: input.channel, page: 0, limit: 1000 })).data
      : [];
    const gone = await store.messages.softDeleteByTransaction(environmentId, input.transactionId, input.channel, at);
    const goneIds = new Set(gone.map((m) => m._id));
    const events = before.filter((m) => goneIds.has(m._id)).map((m) => messageEvent('message.deleted', { ...m, deleted: true, updatedAt: at }, { previous: m }));
    await store.events.record(environmentId, events);
    return gone;
  });
  if (deleted.length === 0) {
    const ofChannel = input.channel ? ` and channel ${input.channel}` : '';
    throw new NotFoundError(`No messages found for transactionId ${input.transactionId}${ofChannel}`);
  }
  const inboxes = new Set(deleted.filter((message) => message.channel === 'in_app').map((message) => message._subscriberId));
  for (const subscriberRecordId of inboxes) deps.realtime.messagesChanged({ environmentId, subscriberRecordId });
  return deleted.length;
}
