import { isoNow } from '../../domain/clock.js';
import { disabledReason, retryDelayBefore, shouldDisable, snippetOf, type WebhookAttempt } from '../../domain/webhooks.js';
import type { DeliverWebhookPayload } from '../../queue/jobs.js';
import { signatureHeaders } from '../../domain/webhook-signing.js';
import type { Deps } from '../deps.js';
import { announceEndpointsChanged } from './announce-endpoints-changed.js';
import { decideAttemptOutcome } from './attempt-outcome.js';
import { enqueueAttempts, pendingAttempt } from './webhook-attempts.js';

/**
 * One delivery attempt (the `deliver-webhook` job): signs the stored event per Standard Webhooks with the endpoint's
 * secret (and, within 24 h of a rotation, the previous one too), POSTs it, and records the outcome. A failure
 * schedules the next attempt of config.webhooks.retryDelaysMs as a new pending attempt; an endpoint failing for
 * config.webhooks.disableAfterMs with no success is disabled. Idempotent: an attempt that is no longer pending is
 * left alone, so a re-run (crash, sweep) sends at most once more, with the same `webhook-id`.
 */
export async function deliverWebhook(deps: Deps, payload: DeliverWebhookPayload): Promise<void> {
  const { store } = deps;
  const attempt = await store.webhooks.getAttempt(payload.environmentId, payload.attemptId);
  if (!attempt || attempt.status !== 'pending') return;
  const [target, event] = await Promise.all([
    store.webhooks.getDeliveryTarget(attempt._environmentId, attempt._endpointId),
    store.webhooks.getEvent(attempt._environmentId, attempt.webhookId),
  ]);
  const endpoint = target?.endpoint;
  const secrets = target?.secrets;
  if (!endpoint || !secrets || !event || !endpoint.enabled) {
    const why = !endpoint || !secrets ? 'Endpoint deleted: not sent' : !event ? 'Event no longer stored: not sent' : 'Endpoint disabled: not sent';
    await store.webhooks.saveAttempt({ ...attempt, status: 'failed', error: why, finishedAt: isoNow(deps.clock) });
    return;
  }

  const now = deps.clock.now();
  const signing = [secrets.current];
  if (secrets.previous && secrets.previousExpiresAt && Date.parse(secrets.previousExpiresAt) > now) signing.push(secrets.previous);
  const body = JSON.stringify(event);
  const headers = { ...endpoint.headers, ...signatureHeaders(signing, event.id, Math.floor(now / 1000), body) };
  const response = await deps.webhooks.send({ url: endpoint.url, headers, body });
  const outcome = decideAttemptOutcome(response);
  deps.metrics.webhookDelivery(outcome);

  const finishedAt = isoNow(deps.clock);
  const finished: WebhookAttempt = {
    ...attempt,
    status: outcome,
    durationMs: response.durationMs,
    responseBodySnippet: snippetOf(response.body),
    finishedAt,
  };
  if (response.statusCode !== undefined) finished.responseStatusCode = response.statusCode;
  if (response.error) finished.error = response.error;

  if (outcome === 'success') {
    await store.webhooks.saveAttempt(finished);
    // Health changes are rare; they drop every process's cached endpoint so the next attempt sees them.
    if (endpoint.failingSince && (await store.webhooks.clearEndpointFailure(endpoint._environmentId, endpoint._id))) {
      await announceEndpointsChanged(deps, endpoint._environmentId);
    }
    return;
  }

  const delay = response.refused ? undefined : retryDelayBefore(deps.config.webhooks.retryDelaysMs, attempt.attempt + 1);
  const { next, changed } = await store.transaction(async (tx) => {
    await tx.webhooks.saveAttempt(finished);
    const { failingSince, started } = await tx.webhooks.noteEndpointFailure(endpoint._environmentId, endpoint._id, finishedAt);
    if (shouldDisable(failingSince, deps.clock.now(), deps.config.webhooks.disableAfterMs)) {
      await tx.webhooks.disableEndpoint(endpoint._environmentId, endpoint._id, disabledReason(failingSince as string, deps.clock.now()), finishedAt);
      return { next: undefined, changed: 'disabled' as const };
    }
    const changed = started ? ('failing' as const) : undefined;
    if (delay === undefined) return { next: undefined, changed };
    const next = pendingAttempt(deps, {
      environmentId: attempt._environmentId,
      endpointId: attempt._endpointId,
      webhookId: attempt.webhookId,
      eventType: attempt.eventType,
      attempt: attempt.attempt + 1,
      delayMs: delay,
    });
    await tx.webhooks.createAttempts([next]);
    return { next, changed };
  });
  if (changed === 'disabled') deps.logger.warn({ endpointId: endpoint._id, environmentId: endpoint._environmentId }, 'webhook endpoint disabled after failing for too long');
  if (changed) await announceEndpointsChanged(deps, endpoint._environmentId);
  if (next) await enqueueAttempts(deps, [next]);
}
