import { isoNow } from '../../domain/clock.js';
import { findCatalogueEntry, normalizeCredentials } from '../../domain/provider-catalogue.js';
import type { Caller, Credentials, Integration, IntegrationConfigurations, StepFilter } from '../../domain/types.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { canBePrimary, highestPriorityActive, sameChannel } from './channel-priority.js';
import { checkIntegration } from './check-integration.js';
import { assertCallerEnvironment, assertIdentifierFree, loadIntegration } from './integration-access.js';
import { presentIntegration, type IntegrationView } from './integration-view.js';
import { validateIntegrationCredentials } from './validate-integration-credentials.js';

export interface UpdateIntegrationInput {
  caller: Caller;
  integrationId: string;
  name?: string;
  identifier?: string;
  _environmentId?: string;
  active?: boolean;
  /** Default true; runs only when the updated integration is active. */
  check?: boolean;
  /** Replaces the stored credentials object as a whole. */
  credentials?: Credentials;
  conditions?: StepFilter[];
  configurations?: IntegrationConfigurations;
}

/** Absent fields stay as they are; given ones replace the stored value. */
function merged(current: Integration, input: UpdateIntegrationInput): Integration {
  return {
    ...current,
    name: input.name ?? current.name,
    identifier: input.identifier ?? current.identifier,
    active: input.active ?? current.active,
    credentials: input.credentials ? normalizeCredentials(input.credentials) : current.credentials,
    conditions: input.conditions ?? current.conditions,
    configurations: input.configurations ?? current.configurations,
  };
}

function validateIfActive(integration: Integration): void {
  if (!integration.active) return;
  const entry = findCatalogueEntry(integration.providerId, integration.channel);
  if (entry) validateIntegrationCredentials(entry, integration.credentials);
}

/**
 * Keeps one active primary per channel: an integration switched off hands primary to the channel's
 * highest-priority active one; one switched on becomes primary when the channel has no active primary.
 */
async function settlePrimary(store: Store, before: Integration, after: Integration, now: string): Promise<void> {
  if (!canBePrimary(after) || before.active === after.active) return;
  const siblings = (await store.integrations.list(after._environmentId, { channel: after.channel }))
    .filter((other) => other._id !== after._id && sameChannel(other, after));
  if (!after.active && after.primary) {
    after.primary = false;
    const successor = highestPriorityActive(siblings);
    if (successor && !successor.primary) await store.integrations.save({ ...successor, primary: true, updatedAt: now });
  } else if (after.active && !siblings.some((other) => other.active && other.primary)) {
    after.primary = true;
  }
}

/** PUT /v1/integrations/{integrationId} (spec operation 1): a merge update of the caller's integration. */
export async function updateIntegration(deps: Deps, input: UpdateIntegrationInput): Promise<IntegrationView> {
  const { caller } = input;
  assertCallerEnvironment(caller, input._environmentId);
  const current = await loadIntegration(deps.store, caller, input.integrationId);
  const next = merged(current, input);
  validateIfActive(next);
  // Cheap local rules first, so a 409 never costs a live provider round trip.
  if (next.identifier !== current.identifier) await assertIdentifierFree(deps.store, caller, next.identifier, current._id);
  if (next.active && input.check !== false) await checkIntegration(deps, next);

  const saved = await deps.store.transaction(async (store) => {
    const fresh = await loadIntegration(store, caller, input.integrationId);
    const after = { ...merged(fresh, input), updatedAt: isoNow(deps.clock) };
    validateIfActive(after);
    if (after.identifier !== fresh.identifier) await assertIdentifierFree(store, caller, after.identifier, fresh._id);
    await settlePrimary(store, fresh, after, after.updatedAt);
    await store.integrations.save(after);
    return after;
  });
  return presentIntegration(saved, caller);
}
