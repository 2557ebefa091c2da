import type { Caller } from '../../domain/types.js';
import type { WebhookAttempt, WebhookAttemptStatus } from '../../domain/webhooks.js';
import type { Deps } from '../deps.js';
import { findEndpoint } from './get-webhook-endpoint.js';

export async function listWebhookAttempts(
  deps: Pick<Deps, 'store'>,
  input: { caller: Caller; id: string; status?: WebhookAttemptStatus; page: number; limit: number },
): Promise<{ data: WebhookAttempt[]; hasMore: boolean }> {
  const endpoint = await findEndpoint(deps.store, input.caller, input.id);
  return deps.store.webhooks.listAttempts(endpoint._environmentId, endpoint._id, { status: input.status, page: input.page, limit: input.limit });
}
