import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { assertChannelSettingsProvider, withoutProvider } from './channel-settings.js';

export interface DeleteSubscriberCredentialsInput {
  caller: Caller;
  subscriberId: string;
  providerId: string;
}

/**
 * Removes every entry of the provider (all its integrations). Deleting credentials the subscriber does
 * not have succeeds and leaves the record, version included, as it was.
 */
export async function deleteSubscriberCredentials(deps: Deps, input: DeleteSubscriberCredentialsInput): Promise<Subscriber> {
  assertChannelSettingsProvider(input.providerId);
  return deps.store.transaction(async (store) => {
    const subscriber = await store.subscribers.findBySubscriberId(input.caller.environmentId, input.subscriberId);
    if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
    const channels = withoutProvider(subscriber.channels, input.providerId);
    if (channels.length === subscriber.channels.length) return subscriber;
    const updated: Subscriber = { ...subscriber, channels, __v: subscriber.__v + 1, updatedAt: isoNow(deps.clock) };
    await store.subscribers.save(updated);
    return updated;
  });
}
