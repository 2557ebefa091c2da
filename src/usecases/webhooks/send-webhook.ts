import { isoNow } from '../../domain/clock.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { isRecordId, newId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import type { WebhookAttempt, WebhookEventBody } from '../../domain/webhooks.js';
import type { Deps } from '../deps.js';
import { findEndpoint } from './get-webhook-endpoint.js';
import { enqueueAttempts, pendingAttempt } from './webhook-attempts.js';

/**
 * The manual sends: a test event to one endpoint, one attempt's event again, every failed event since a time. Each
 * makes new pending attempts (first of a fresh retry schedule) with the event's own id, so `webhook-id` is unchanged.
 */

/** Sends one `webhook.test` event to the endpoint, whatever its event filter. */
export async function sendTestWebhook(deps: Deps, input: { caller: Caller; id: string }): Promise<WebhookAttempt> {
  const endpoint = await findEndpoint(deps.store, input.caller, input.id);
  const now = deps.clock.now();
  const event: WebhookEventBody = {
    id: newId(now),
    type: 'webhook.test',
    object: 'webhook',
    data: { object: { endpointId: endpoint._id, url: endpoint.url, message: 'A test event from Herald' } },
    timestamp: isoNow(deps.clock),
    environmentId: endpoint._environmentId,
  };
  const attempt = pendingAttempt(deps, { environmentId: endpoint._environmentId, endpointId: endpoint._id, webhookId: event.id, eventType: event.type, attempt: 1, delayMs: 0 });
  await deps.store.transaction(async (tx) => {
    await tx.webhooks.createDispatchedEvent(event);
    await tx.webhooks.createAttempts([attempt]);
  });
  await enqueueAttempts(deps, [attempt]);
  return attempt;
}

/** Sends the event of one attempt again to that attempt's endpoint. */
export async function resendWebhookAttempt(deps: Deps, input: { caller: Caller; attemptId: string }): Promise<WebhookAttempt> {
  const original = isRecordId(input.attemptId) ? await deps.store.webhooks.getAttempt(input.caller.environmentId, input.attemptId) : undefined;
  if (!original) throw NotFoundError.entity('Webhook attempt', input.attemptId);
  const endpoint = await findEndpoint(deps.store, input.caller, original._endpointId);
  const attempt = pendingAttempt(deps, {
    environmentId: endpoint._environmentId,
    endpointId: endpoint._id,
    webhookId: original.webhookId,
    eventType: original.eventType,
    attempt: 1,
    delayMs: 0,
  });
  await deps.store.webhooks.createAttempts([attempt]);
  await enqueueAttempts(deps, [attempt]);
  return attempt;
}

/** Sends again every event to the endpoint since `since` whose latest attempt failed; answers how many. */
export async function recoverWebhookEndpoint(deps: Deps, input: { caller: Caller; id: string; since: string }): Promise<number> {
  const since = Date.parse(input.since);
  if (Number.isNaN(since)) throw new ValidationError([`since must be an ISO 8601 date-time, got ${JSON.stringify(input.since)}`]);
  if (since > deps.clock.now()) throw new ValidationError(['since must not be in the future']);
  const endpoint = await findEndpoint(deps.store, input.caller, input.id);
  const failed = await deps.store.webhooks.listFailedEvents(endpoint._environmentId, endpoint._id, new Date(since).toISOString());
  const attempts = failed.map((event) =>
    pendingAttempt(deps, { environmentId: endpoint._environmentId, endpointId: endpoint._id, webhookId: event.webhookId, eventType: event.eventType, attempt: 1, delayMs: 0 }),
  );
  await deps.store.webhooks.createAttempts(attempts);
  await enqueueAttempts(deps, attempts);
  return attempts.length;
}
