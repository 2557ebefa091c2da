import { isoNow } from '../../domain/clock.js';
import { ValidationError } from '../../domain/errors.js';
import { findCatalogueEntry } from '../../domain/provider-catalogue.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { canBePrimary, nextPriority, sameChannel } from './channel-priority.js';
import { loadIntegration } from './integration-access.js';
import { presentIntegration, type IntegrationView } from './integration-view.js';
import { validateIntegrationCredentials } from './validate-integration-credentials.js';

export interface SetPrimaryIntegrationInput {
  caller: Caller;
  integrationId: string;
}

/**
 * POST /v1/integrations/{integrationId}/set-primary. As in Novu, the integration is also switched on and
 * moved to the top priority of its channel; every other integration of the channel loses primary.
 * Switching it on requires its credentials to be complete, as any activation does.
 */
export async function setPrimaryIntegration(deps: Deps, input: SetPrimaryIntegrationInput): Promise<IntegrationView> {
  const { caller } = input;
  const updated = await deps.store.transaction(async (store) => {
    const integration = await loadIntegration(store, caller, input.integrationId);
    if (!canBePrimary(integration)) {
      throw new ValidationError([`integration ${integration._id} is an agent integration and has no channel to be primary for`]);
    }
    const entry = findCatalogueEntry(integration.providerId, integration.channel);
    if (entry) validateIntegrationCredentials(entry, integration.credentials);
    const now = isoNow(deps.clock);
    const siblings = (await store.integrations.list(caller.environmentId, { channel: integration.channel }))
      .filter((other) => other._id !== integration._id && sameChannel(other, integration));
    for (const other of siblings.filter((sibling) => sibling.primary)) {
      await store.integrations.save({ ...other, primary: false, updatedAt: now });
    }
    const top = Math.max(integration.priority, nextPriority(siblings));
    const next = { ...integration, active: true, primary: true, priority: top, updatedAt: now };
    await store.integrations.save(next);
    return next;
  });
  return presentIntegration(updated, caller);
}
