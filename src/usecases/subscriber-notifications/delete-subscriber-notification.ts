import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { deleteInboxNotification } from '../inbox/inbox-notifications.js';
import { validateContextKeyFilter } from '../messages/context-key-filter.js';
import { subscriberScopeOf } from './subscriber-scope.js';

/** DELETE /v2/subscribers/{subscriberId}/notifications/{id}: a soft delete of one of the subscriber's in-app messages. */
export async function deleteSubscriberNotification(
  deps: Deps,
  input: { caller: Caller; subscriberId: string; notificationId: string; contextKeys?: string[] },
): Promise<void> {
  validateContextKeyFilter(input.contextKeys);
  const caller = await subscriberScopeOf(deps, input.caller, input.subscriberId);
  await deleteInboxNotification(deps, { caller, id: input.notificationId, contextKeys: input.contextKeys });
}
