import type { Subscriber } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { updateSubscriberChannel, type SubscriberChannelInput } from './update-subscriber-channel.js';

export type SetSubscriberCredentialsInput = SubscriberChannelInput;

/**
 * PUT: the entry of this provider and integration becomes exactly the given credentials (device tokens
 * de-duplicated); fields not given are dropped. Other providers' and integrations' entries are untouched.
 */
export async function setSubscriberCredentials(deps: Deps, input: SetSubscriberCredentialsInput): Promise<Subscriber> {
  return updateSubscriberChannel(deps, input, 'replace');
}
