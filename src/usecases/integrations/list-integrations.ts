import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { presentIntegrations, type IntegrationView } from './integration-view.js';

export interface ListIntegrationsInput {
  caller: Caller;
}

/** Every live (non-deleted) integration of the caller's environment, oldest first. */
export async function listIntegrations(deps: Deps, input: ListIntegrationsInput): Promise<IntegrationView[]> {
  const integrations = await deps.store.integrations.list(input.caller.environmentId);
  return presentIntegrations(integrations, input.caller);
}
