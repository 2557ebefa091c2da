import type { InboxFilter } from '../../domain/inbox.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { updateInboxNotifications, type BulkInboxAction } from '../inbox/inbox-notifications.js';
import { validateContextKeyFilter } from '../messages/context-key-filter.js';
import { subscriberScopeOf } from './subscriber-scope.js';

export interface UpdateSubscriberNotificationsInput {
  caller: Caller;
  subscriberId: string;
  action: BulkInboxAction;
  /** `seen` only: these notifications; otherwise every match of the filter. */
  ids?: string[];
  tags?: InboxFilter['tags'];
  data?: Record<string, unknown>;
  contextKeys?: string[];
}

/** The bulk POSTs of /v2/subscribers/{subscriberId}/notifications (seen, read, archive, read-archive, delete). */
export async function updateSubscriberNotifications(deps: Deps, input: UpdateSubscriberNotificationsInput): Promise<number> {
  validateContextKeyFilter(input.contextKeys);
  const caller = await subscriberScopeOf(deps, input.caller, input.subscriberId);
  return updateInboxNotifications(deps, { caller, action: input.action, ids: input.ids, tags: input.tags, data: input.data, contextKeys: input.contextKeys });
}
