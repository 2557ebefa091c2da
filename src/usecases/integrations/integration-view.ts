import { canSeeCredentials, type Caller, type Integration } from '../../domain/types.js';

/** The Integration record as the API returns it: the spec's fields plus timestamps, never `priority`. */
export type IntegrationView = Omit<Integration, 'priority' | 'credentials'> & { credentials?: Integration['credentials'] };

/**
 * Only session callers and dashboard admins see decrypted credentials (spec, Authentication 4); API-key callers
 * and dashboard viewers get every other field. Deciding it here keeps the rule out of the HTTP layer and out of each use-case.
 */
export function presentIntegration(integration: Integration, caller: Caller): IntegrationView {
  const { priority: _priority, credentials, ...rest } = integration;
  return canSeeCredentials(caller) ? { ...rest, credentials } : rest;
}

export function presentIntegrations(integrations: Integration[], caller: Caller): IntegrationView[] {
  return integrations.map((integration) => presentIntegration(integration, caller));
}
