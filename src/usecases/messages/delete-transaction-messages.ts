import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, DeliveryChannel } from '../../domain/types.js';
import type { Deps } from '../deps.js';

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
  const deleted = await deps.store.transaction((store) =>
    store.messages.softDeleteByTransaction(environmentId, input.transactionId, input.channel, isoNow(deps.clock)),
  );
  if (deleted.length === 0) {
    const ofChannel = input.channel ? ` and channel ${input.channel}` : '';
    throw new NotFoundError(`No messages found for transactionId ${input.transactionId}${ofChannel}`);
  }
  const inboxes = new Set(deleted.filter((message) => message.channel === 'in_app').map((message) => message._subscriberId));
  for (const subscriberRecordId of inboxes) deps.realtime.messagesChanged({ environmentId, subscriberRecordId });
  return deleted.length;
}
