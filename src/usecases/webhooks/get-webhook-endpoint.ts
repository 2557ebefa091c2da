import { NotFoundError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { WebhookEndpoint } from '../../domain/webhooks.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';

/** The caller environment's endpoint, or the 404 every other environment's id (and a malformed id) gets. */
export async function findEndpoint(store: Store, caller: Caller, id: string): Promise<WebhookEndpoint> {
  const endpoint = isRecordId(id) ? await store.webhooks.getEndpoint(caller.environmentId, id) : undefined;
  if (!endpoint) throw NotFoundError.entity('Webhook endpoint', id);
  return endpoint;
}

export async function getWebhookEndpoint(deps: Pick<Deps, 'store'>, input: { caller: Caller; id: string }): Promise<WebhookEndpoint> {
  return findEndpoint(deps.store, input.caller, input.id);
}

export async function listWebhookEndpoints(deps: Pick<Deps, 'store'>, input: { caller: Caller }): Promise<WebhookEndpoint[]> {
  return deps.store.webhooks.listEndpoints(input.caller.environmentId);
}

/** The endpoint's current signing secret (admins and API keys only). */
export async function getWebhookSecret(deps: Pick<Deps, 'store'>, input: { caller: Caller; id: string }): Promise<string> {
  const endpoint = await findEndpoint(deps.store, input.caller, input.id);
  const secrets = await deps.store.webhooks.getSecrets(endpoint._environmentId, endpoint._id);
  if (!secrets) throw NotFoundError.entity('Webhook endpoint', input.id);
  return secrets.current;
}
