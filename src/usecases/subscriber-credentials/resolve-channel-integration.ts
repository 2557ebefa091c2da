import { NotFoundError, ValidationError } from '../../domain/errors.js';
import type { Caller, Integration } from '../../domain/types.js';
import type { Store } from '../../store/ports.js';
import { highestPriorityActive } from '../integrations/channel-priority.js';

export interface ChannelIntegrationChoice {
  providerId: string;
  channel: 'chat' | 'push';
  integrationIdentifier?: string;
}

/**
 * The integration a ChannelSettings entry belongs to. A named `integrationIdentifier` must be a live
 * integration of the caller's environment (404) for the same provider (400). Without one: the provider's
 * active primary integration, else its highest-priority active one, else none (the entry is then kept with
 * `_integrationId: ''`, so credentials can be stored before the integration is configured).
 */
export async function resolveChannelIntegration(store: Store, caller: Caller, choice: ChannelIntegrationChoice): Promise<Integration | undefined> {
  if (choice.integrationIdentifier !== undefined) {
    const named = await store.integrations.findByIdentifier(caller.environmentId, choice.integrationIdentifier);
    if (!named) throw new NotFoundError(`Integration with identifier ${choice.integrationIdentifier} not found`);
    if (named.providerId !== choice.providerId) {
      throw new ValidationError([
        `integrationIdentifier ${choice.integrationIdentifier} is a ${named.providerId} integration, not ${choice.providerId}`,
      ]);
    }
    return named;
  }
  const active = await store.integrations.list(caller.environmentId, { channel: choice.channel, activeOnly: true });
  const ofProvider = active.filter((integration) => integration.providerId === choice.providerId);
  return ofProvider.find((integration) => integration.primary) ?? highestPriorityActive(ofProvider);
}
