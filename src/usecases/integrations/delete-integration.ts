import { isoNow } from '../../domain/clock.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { canBePrimary, highestPriorityActive, sameChannel } from './channel-priority.js';
import { loadIntegration } from './integration-access.js';
import { presentIntegrations, type IntegrationView } from './integration-view.js';

export interface DeleteIntegrationInput {
  caller: Caller;
  integrationId: string;
}

/**
 * DELETE /v1/integrations/{integrationId} (spec operation 2): an irreversible soft delete recording who
 * and when. Deleting the primary hands primary to the channel's highest-priority active integration.
 * Returns the environment's remaining live integrations.
 */
export async function deleteIntegration(deps: Deps, input: DeleteIntegrationInput): Promise<IntegrationView[]> {
  const { caller } = input;
  const remaining = await deps.store.transaction(async (store) => {
    const integration = await loadIntegration(store, caller, input.integrationId);
    const now = isoNow(deps.clock);
    await store.integrations.save({
      ...integration,
      deleted: true,
      deletedAt: now,
      deletedBy: caller.actorId,
      primary: false,
      updatedAt: now,
    });
    if (integration.primary && canBePrimary(integration)) {
      const siblings = (await store.integrations.list(caller.environmentId, { channel: integration.channel }))
        .filter((other) => sameChannel(other, integration));
      const successor = highestPriorityActive(siblings);
      if (successor && !successor.primary) await store.integrations.save({ ...successor, primary: true, updatedAt: now });
    }
    return store.integrations.list(caller.environmentId);
  });
  return presentIntegrations(remaining, caller);
}
