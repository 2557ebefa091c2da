import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { subscriberRevocationOf } from '../auth/subscriber-tokens.js';

export interface DeleteSubscriberInput {
  caller: Caller;
  subscriberId: string;
}

/**
 * Soft delete: the subscriber is gone from reads (404) and its subscriberId may be created again. Its Inbox tokens
 * are refused from the answer on, in every process, and its sockets are disconnected.
 */
export async function deleteSubscriber(deps: Deps, input: DeleteSubscriberInput): Promise<{ acknowledged: true; status: 'deleted' }> {
  const deleted = await deps.store.transaction(async (store) => {
    const existing = await store.subscribers.findBySubscriberId(input.caller.environmentId, input.subscriberId);
    if (!existing || !(await store.subscribers.delete(input.caller.environmentId, existing._id, isoNow(deps.clock)))) {
      throw NotFoundError.subscriber(input.subscriberId);
    }
    return existing;
  });
  deps.realtime.subscriberChanged({ environmentId: input.caller.environmentId, subscriberRecordId: deleted._id });
  // Before the answer: by then no process accepts the subscriber's tokens and their sockets are being closed.
  await deps.subscriberRevocations.publish(subscriberRevocationOf(input.caller.environmentId, deleted._id));
  return { acknowledged: true, status: 'deleted' };
}
