import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { withDomainEvents } from '../events/record-domain-events.js';
import { messageEvent } from '../../domain/webhooks.js';

export interface DeleteMessageInput {
  caller: Caller;
  messageId: string;
}

/** Soft delete: gone from lists and reads afterwards (404), irreversible through the API. */
export async function deleteMessage(deps: Deps, input: DeleteMessageInput): Promise<{ acknowledged: true; status: 'deleted' }> {
  const environmentId = input.caller.environmentId;
  const message = isRecordId(input.messageId) ? await deps.store.messages.get(environmentId, input.messageId) : undefined;
  const at = isoNow(deps.clock);
  const deleted =
    message !== undefined &&
    (await withDomainEvents(deps.store, environmentId, async (tx, events) => {
      const done = await tx.messages.softDelete(environmentId, input.messageId, at);
      if (done) events.push(messageEvent('message.deleted', { ...message, deleted: true, updatedAt: at }, { previous: message }));
      return done;
    }));
  if (!deleted) throw NotFoundError.entity('Message', input.messageId);
  // An in-app message leaves its subscriber's Inbox: open Inboxes get their new counts.
  if (message.channel === 'in_app') deps.realtime.messagesChanged({ environmentId, subscriberRecordId: message._subscriberId });
  return { acknowledged: true, status: 'deleted' };
}
