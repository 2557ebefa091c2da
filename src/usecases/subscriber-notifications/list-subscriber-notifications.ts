import type { InboxFilter } from '../../domain/inbox.js';
import type { Caller, Message } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { listInboxNotifications } from '../inbox/inbox-notifications.js';
import { validateContextKeyFilter } from '../messages/context-key-filter.js';
import { subscriberScopeOf } from './subscriber-scope.js';

export interface ListSubscriberNotificationsInput {
  caller: Caller;
  subscriberId: string;
  filter: InboxFilter;
  after?: string;
  offset: number;
  limit: number;
}

/** GET /v2/subscribers/{subscriberId}/notifications: the subscriber's Inbox list, read server-side. */
export async function listSubscriberNotifications(deps: Deps, input: ListSubscriberNotificationsInput): Promise<{ data: Message[]; hasMore: boolean }> {
  validateContextKeyFilter(input.filter.contextKeys);
  const caller = await subscriberScopeOf(deps, input.caller, input.subscriberId);
  return listInboxNotifications(deps, { caller, filter: input.filter, after: input.after, offset: input.offset, limit: input.limit });
}
