import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface GetSubscriberInput {
  caller: Caller;
  subscriberId: string;
}

export async function getSubscriber(deps: Deps, input: GetSubscriberInput): Promise<Subscriber> {
  const subscriber = await deps.store.subscribers.findBySubscriberId(input.caller.environmentId, input.subscriberId);
  if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
  return subscriber;
}
