import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { WebhookEndpoint } from '../../domain/webhooks.js';
import type { Deps } from '../deps.js';
import { announceEndpointsChanged } from './announce-endpoints-changed.js';
import { findEndpoint } from './get-webhook-endpoint.js';
import { validateEndpointInput } from './webhook-endpoint-input.js';

export interface UpdateWebhookEndpointInput {
  caller: Caller;
  id: string;
  url?: string;
  description?: string;
  eventTypes?: string[];
  enabled?: boolean;
  /** Replaces the endpoint's headers as a whole. */
  headers?: Record<string, string>;
}

/** Changes the given fields; enabling an endpoint again clears its failure record and the reason it was disabled. */
export async function updateWebhookEndpoint(deps: Deps, input: UpdateWebhookEndpointInput): Promise<WebhookEndpoint> {
  await validateEndpointInput(deps, input);
  const current = await findEndpoint(deps.store, input.caller, input.id);
  const next: WebhookEndpoint = { ...current, updatedAt: isoNow(deps.clock) };
  if (input.url !== undefined) next.url = input.url;
  if (input.description !== undefined) next.description = input.description;
  if (input.eventTypes !== undefined) next.eventTypes = [...new Set(input.eventTypes)];
  if (input.headers !== undefined) next.headers = input.headers;
  if (input.enabled !== undefined) next.enabled = input.enabled;
  if (input.enabled === true && !current.enabled) {
    delete next.disabledReason;
    delete next.failingSince;
  }
  if (!(await deps.store.webhooks.saveEndpoint(next))) throw NotFoundError.entity('Webhook endpoint', input.id);
  await announceEndpointsChanged(deps, next._environmentId);
  return next;
}

export async function deleteWebhookEndpoint(deps: Deps, input: { caller: Caller; id: string }): Promise<void> {
  const endpoint = await findEndpoint(deps.store, input.caller, input.id);
  if (!(await deps.store.webhooks.deleteEndpoint(endpoint._environmentId, endpoint._id, isoNow(deps.clock)))) throw NotFoundError.entity('Webhook endpoint', input.id);
  await announceEndpointsChanged(deps, endpoint._environmentId);
}
