import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller, ChannelCredentials, ChannelSettings, Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { assertChannelSettingsProvider, mergeChannelEntry, replaceChannelEntry, validateChannelCredentials } from './channel-settings.js';
import { resolveChannelIntegration } from './resolve-channel-integration.js';

/** The body of PUT and PATCH /v1/subscribers/{subscriberId}/credentials (Novu's UpdateSubscriberChannelRequestDto). */
export interface SubscriberChannelInput {
  caller: Caller;
  subscriberId: string;
  providerId: string;
  integrationIdentifier?: string;
  credentials: ChannelCredentials;
}

/**
 * Shared by set (replace) and merge: validates, resolves the integration, applies `mode` to the entry of
 * that provider and integration, and saves with `__v` and `updatedAt` bumped, all in one transaction.
 */
export async function updateSubscriberChannel(deps: Deps, input: SubscriberChannelInput, mode: 'replace' | 'merge'): Promise<Subscriber> {
  const channel = assertChannelSettingsProvider(input.providerId);
  validateChannelCredentials(input.credentials);
  return deps.store.transaction(async (store) => {
    const subscriber = await store.subscribers.findBySubscriberId(input.caller.environmentId, input.subscriberId);
    if (!subscriber) throw NotFoundError.subscriber(input.subscriberId);
    const integration = await resolveChannelIntegration(store, input.caller, {
      providerId: input.providerId,
      channel,
      integrationIdentifier: input.integrationIdentifier,
    });
    const entry: ChannelSettings = {
      providerId: input.providerId,
      ...(integration ? { integrationIdentifier: integration.identifier } : {}),
      credentials: input.credentials,
      _integrationId: integration?._id ?? '',
    };
    const channels = mode === 'replace' ? replaceChannelEntry(subscriber.channels, entry) : mergeChannelEntry(subscriber.channels, entry);
    const updated: Subscriber = { ...subscriber, channels, __v: subscriber.__v + 1, updatedAt: isoNow(deps.clock) };
    await store.subscribers.save(updated);
    return updated;
  });
}
