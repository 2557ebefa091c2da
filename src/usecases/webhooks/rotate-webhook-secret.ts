import { isoNow } from '../../domain/clock.js';
import type { Caller } from '../../domain/types.js';
import { SECRET_ROTATION_OVERLAP_MS } from '../../domain/webhooks.js';
import { newWebhookSecret } from '../../domain/webhook-signing.js';
import type { Deps } from '../deps.js';
import { findEndpoint } from './get-webhook-endpoint.js';
import { announceEndpointsChanged } from './announce-endpoints-changed.js';

/** A new secret signs from now on; for 24 hours the old one signs too (two space-separated signatures). */
export async function rotateWebhookSecret(deps: Deps, input: { caller: Caller; id: string }): Promise<string> {
  const endpoint = await findEndpoint(deps.store, input.caller, input.id);
  const secret = newWebhookSecret();
  const expires = new Date(deps.clock.now() + SECRET_ROTATION_OVERLAP_MS).toISOString();
  await deps.store.webhooks.rotateSecret(endpoint._environmentId, endpoint._id, secret, expires, isoNow(deps.clock));
  await announceEndpointsChanged(deps, endpoint._environmentId);
  return secret;
}
