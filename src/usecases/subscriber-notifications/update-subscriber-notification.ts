import type { Caller, Message } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { updateInboxNotification, type InboxActionInput } from '../inbox/inbox-notifications.js';
import { validateContextKeyFilter } from '../messages/context-key-filter.js';
import { subscriberScopeOf } from './subscriber-scope.js';

export interface UpdateSubscriberNotificationInput {
  caller: Caller;
  subscriberId: string;
  notificationId: string;
  action: InboxActionInput;
  /** When given, the notification's context keys must be exactly these (else 404). */
  contextKeys?: string[];
}

/** PATCH /v2/subscribers/{subscriberId}/notifications/{id}/<action>: one in-app message's Inbox action. */
export async function updateSubscriberNotification(deps: Deps, input: UpdateSubscriberNotificationInput): Promise<Message> {
  validateContextKeyFilter(input.contextKeys);
  const caller = await subscriberScopeOf(deps, input.caller, input.subscriberId);
  return updateInboxNotification(deps, { caller, id: input.notificationId, action: input.action, contextKeys: input.contextKeys });
}
