import { NotFoundError } from '../../domain/errors.js';
import type { Caller, SubscriberCaller } from '../../domain/types.js';
import type { Deps } from '../deps.js';

/**
 * The server-side `/v2/subscribers/{subscriberId}/notifications/*` routes act on one subscriber's in-app messages
 * exactly as that subscriber's Inbox would: the subscriber (of the caller's environment only; another environment's is
 * a 404) is resolved to the scope the Inbox use-cases take. The actor stays the subscriber, as Novu records it.
 */
export async function subscriberScopeOf(deps: Pick<Deps, 'store'>, caller: Caller, subscriberId: string): Promise<SubscriberCaller> {
  const subscriber = await deps.store.subscribers.findBySubscriberId(caller.environmentId, subscriberId);
  if (!subscriber) throw NotFoundError.subscriber(subscriberId);
  return {
    kind: 'subscriber',
    environmentId: caller.environmentId,
    organizationId: caller.organizationId,
    actorId: subscriber._id,
    subscriberRecordId: subscriber._id,
    subscriberId: subscriber.subscriberId,
  };
}
