import type { Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { updateSubscriberChannel, type SubscriberChannelInput } from './update-subscriber-channel.js';

export type MergeSubscriberCredentialsInput = SubscriberChannelInput;

/**
 * PATCH: device tokens are appended to the entry's and de-duplicated; other given fields overwrite;
 * fields not given stay. Creates the entry when the subscriber has none for this provider and integration.
 */
export async function mergeSubscriberCredentials(deps: Deps, input: MergeSubscriberCredentialsInput): Promise<Subscriber> {
  return updateSubscriberChannel(deps, input, 'merge');
}
