import type { Caller, Message } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { updateInboxNotification } from '../inbox/inbox-notifications.js';
import { subscriberScopeOf } from '../subscriber-notifications/subscriber-scope.js';

export interface UpdateMessageActionInput {
  caller: Caller;
  subscriberId: string;
  messageId: string;
  /** The button: primary or secondary. */
  type: 'primary' | 'secondary';
  /** `done` completes the action, `pending` reverts it (Novu's MessageActionStatusEnum). */
  status: 'pending' | 'done';
  payload?: Record<string, unknown>;
}

/**
 * POST /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type} (`@novu/node` markMessageActionSeen,
 * `@novu/api` subscribers.messages.updateAsSeen): Novu's v1 name for the Inbox's complete/revert of a button, with
 * the click's payload kept in `cta.action.result.payload`. Only the subscriber's in-app messages have buttons.
 */
export async function updateMessageAction(deps: Deps, input: UpdateMessageActionInput): Promise<Message> {
  const caller = await subscriberScopeOf(deps, input.caller, input.subscriberId);
  const type = input.status === 'done' ? 'complete' : 'revert';
  return updateInboxNotification(deps, {
    caller,
    id: input.messageId,
    action: { type, actionType: input.type, ...(input.payload !== undefined ? { payload: input.payload } : {}) },
  });
}
