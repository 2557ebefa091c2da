import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { presentIntegrations, type IntegrationView } from './integration-view.js';

export interface ListActiveIntegrationsInput {
  caller: Caller;
}

/** The live integrations of the caller's environment that are switched on, oldest first. */
export async function listActiveIntegrations(deps: Deps, input: ListActiveIntegrationsInput): Promise<IntegrationView[]> {
  const integrations = await deps.store.integrations.list(input.caller.environmentId, { activeOnly: true });
  return presentIntegrations(integrations, input.caller);
}
