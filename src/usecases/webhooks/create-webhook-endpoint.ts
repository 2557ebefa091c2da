import { isoNow } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { WebhookEndpoint } from '../../domain/webhooks.js';
import { newWebhookSecret } from '../../domain/webhook-signing.js';
import type { Deps } from '../deps.js';
import { announceEndpointsChanged } from './announce-endpoints-changed.js';
import { validateEndpointInput } from './webhook-endpoint-input.js';

export interface CreateWebhookEndpointInput {
  caller: Caller;
  url: string;
  description?: string;
  /** Absent or empty: every event type. */
  eventTypes?: string[];
  enabled?: boolean;
  headers?: Record<string, string>;
}

/** Creates an endpoint with a new `whsec_` secret; the answer is the only one besides GET .../secret that shows it. */
export async function createWebhookEndpoint(deps: Deps, input: CreateWebhookEndpointInput): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  await validateEndpointInput(deps, input);
  const at = isoNow(deps.clock);
  const endpoint: WebhookEndpoint = {
    _id: newId(deps.clock.now()),
    _environmentId: input.caller.environmentId,
    url: input.url,
    description: input.description ?? '',
    eventTypes: [...new Set(input.eventTypes ?? [])],
    enabled: input.enabled ?? true,
    headers: input.headers ?? {},
    createdAt: at,
    updatedAt: at,
  };
  const secret = newWebhookSecret();
  await deps.store.webhooks.createEndpoint(endpoint, secret);
  await announceEndpointsChanged(deps, endpoint._environmentId);
  return { endpoint, secret };
}
