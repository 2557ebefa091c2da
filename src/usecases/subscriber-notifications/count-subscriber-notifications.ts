import type { InboxFilter } from '../../domain/inbox.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { countInboxNotifications } from '../inbox/inbox-notifications.js';
import { subscriberScopeOf } from './subscriber-scope.js';

/** GET /v2/subscribers/{subscriberId}/notifications/count: one count per filter, as the Inbox's count. */
export async function countSubscriberNotifications(deps: Deps, input: { caller: Caller; subscriberId: string; filters: InboxFilter[] }): Promise<number[]> {
  const caller = await subscriberScopeOf(deps, input.caller, input.subscriberId);
  return countInboxNotifications(deps, { caller, filters: input.filters });
}
