import { isoNow } from '../../domain/clock.js';
import { disabledReason, retryDelayBefore, shouldDisable, snippetOf, type WebhookAttempt, type WebhookEndpoint, type WebhookEventBody, type WebhookSecrets } from '../../domain/webhooks.js';
import type { DeliverWebhookPayload } from '../../queue/jobs.js';
import { signatureHeaders } from '../../domain/webhook-signing.js';
import type { Deps } from '../deps.js';
import { announceEndpointsChanged } from './announce-endpoints-changed.js';
import { decideAttemptOutcome } from './attempt-outcome.js';
import { enqueueAttempts, pendingAttempt } from './webhook-attempts.js';

/** Sends of one batch in flight at once, unless the caller says otherwise: enough that a slow receiver does not stall
 * the batch. */
const BATCH_SEND_CONCURRENCY = 16;

/** How long an idle lane waits before asking again whether it may send. */
const LANE_PAUSE_MS = 20;

type DeliveryTarget = { endpoint: WebhookEndpoint; secrets: WebhookSecrets };

/** A finished attempt and what its answer means for the endpoint. */
interface Sent {
  finished: WebhookAttempt;
  endpoint: WebhookEndpoint;
  /** The outbound guard refused the target: no retry. */
  refused: boolean;
}

/**
 * One delivery attempt (the `deliver-webhook` job, which carries retries, manual sends and sweeps' re-sends; first
 * attempts go out in batches from the relay, deliverAttempts): signs the stored event per Standard Webhooks with the
 * endpoint's secret (and, within 24 h of a rotation, the previous one too), POSTs it, and records the outcome. A
 * failure schedules the next attempt of config.webhooks.retryDelaysMs as a new pending attempt; an endpoint failing
 * for config.webhooks.disableAfterMs with no success is disabled. Idempotent: an attempt that is no longer pending is
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
  const unsendable = whyUnsendable(target, event);
  if (unsendable || !target || !event) {
    await store.webhooks.finishAttempts([{ ...attempt, status: 'failed', error: unsendable, finishedAt: isoNow(deps.clock) }]);
    return;
  }
  const sent = await sendAttempt(deps, attempt, target, JSON.stringify(event), event.id);
  await settleAttempts(deps, [sent]);
}

/**
 * The relay's first attempts, sent in one batch: the events' bodies are at hand (no read per attempt), up to
 * `lanes()` (at most BATCH_SEND_CONCURRENCY) requests in flight over the sender's keep-alive connections, and the outcomes written with one
 * statement (settleAttempts). The attempts are stored as pending before this runs, so a crash mid-batch leaves them to
 * sweepWebhookAttempts, which re-queues them with their webhook-id.
 */
export async function deliverAttempts(
  deps: Deps,
  attempts: WebhookAttempt[],
  events: Map<string, WebhookEventBody>,
  lanes: () => number = () => BATCH_SEND_CONCURRENCY,
): Promise<void> {
  if (attempts.length === 0) return;
  const targets = new Map<string, Promise<DeliveryTarget | undefined>>();
  const bodies = new Map<string, string>();
  const unsendable: WebhookAttempt[] = [];
  const sent: Sent[] = [];
  /** First attempts to endpoints already failing: sent by queue jobs instead, so a dead or slow receiver (up to the
   * send timeout per attempt) does not hold up every other endpoint's batch. */
  const viaQueue: WebhookAttempt[] = [];
  let next = 0;
  // Lane `index` sends only while `lanes()` allows that many (asked before each send, so the share follows the load).
  const lane = async (index: number) => {
    while (next < attempts.length) {
      if (index >= Math.max(1, lanes())) {
        await new Promise((resolve) => setTimeout(resolve, LANE_PAUSE_MS));
        continue;
      }
      const attempt = attempts[next++];
      const key = `${attempt._environmentId}:${attempt._endpointId}`;
      let target = targets.get(key);
      if (!target) targets.set(key, (target = deps.store.webhooks.getDeliveryTarget(attempt._environmentId, attempt._endpointId)));
      const loaded = await target;
      const event = events.get(attempt.webhookId);
      const why = whyUnsendable(loaded, event);
      if (why || !loaded || !event) {
        unsendable.push({ ...attempt, status: 'failed', error: why, finishedAt: isoNow(deps.clock) });
        continue;
      }
      if (loaded.endpoint.failingSince) {
        viaQueue.push(attempt);
        continue;
      }
      // One serialisation per event, whatever the number of its endpoints.
      let body = bodies.get(event.id);
      if (body === undefined) bodies.set(event.id, (body = JSON.stringify(event)));
      sent.push(await sendAttempt(deps, attempt, loaded, body, event.id));
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_SEND_CONCURRENCY, attempts.length) }, (_, index) => lane(index)));
  if (unsendable.length > 0) await deps.store.webhooks.finishAttempts(unsendable);
  await settleAttempts(deps, sent);
  // Stored as pending before the batch began: only their jobs are missing.
  await enqueueAttempts(deps, viaQueue);
}

function whyUnsendable(target: DeliveryTarget | undefined, event: WebhookEventBody | undefined): string | undefined {
  if (!target) return 'Endpoint deleted: not sent';
  if (!event) return 'Event no longer stored: not sent';
  if (!target.endpoint.enabled) return 'Endpoint disabled: not sent';
  return undefined;
}

async function sendAttempt(deps: Deps, attempt: WebhookAttempt, { endpoint, secrets }: DeliveryTarget, body: string, eventId: string): Promise<Sent> {
  const now = deps.clock.now();
  const signing = [secrets.current];
  if (secrets.previous && secrets.previousExpiresAt && Date.parse(secrets.previousExpiresAt) > now) signing.push(secrets.previous);
  const headers = { ...endpoint.headers, ...signatureHeaders(signing, eventId, Math.floor(now / 1000), body) };
  const response = await deps.webhooks.send({ url: endpoint.url, headers, body });
  const outcome = decideAttemptOutcome(response);
  deps.metrics.webhookDelivery(outcome);
  const finished: WebhookAttempt = {
    ...attempt,
    status: outcome,
    durationMs: response.durationMs,
    responseBodySnippet: snippetOf(response.body),
    finishedAt: isoNow(deps.clock),
  };
  if (response.statusCode !== undefined) finished.responseStatusCode = response.statusCode;
  if (response.error) finished.error = response.error;
  return { finished, endpoint, refused: response.refused === true };
}

/**
 * Records finished attempts in one transaction: their outcomes (only where still pending, so a racing re-send does not
 * schedule a second retry), and per endpoint with failures its failing time, then either its disabling or the next
 * pending attempts. Outcome and retry commit together, so a crash cannot leave a failure without its retry. After the
 * commit: retries queued, health changes announced.
 */
async function settleAttempts(deps: Deps, sent: Sent[]): Promise<void> {
  if (sent.length === 0) return;
  const { store } = deps;
  const { retries, changed } = await store.transaction(async (tx) => {
    const written = new Set(await tx.webhooks.finishAttempts(sent.map((s) => s.finished)));
    const failedBy = new Map<string, Sent[]>();
    for (const s of sent) {
      if (s.finished.status !== 'failed' || !written.has(s.finished._id)) continue;
      const key = `${s.endpoint._environmentId}:${s.endpoint._id}`;
      failedBy.set(key, [...(failedBy.get(key) ?? []), s]);
    }
    const retries: WebhookAttempt[] = [];
    const changed: Array<{ endpoint: WebhookEndpoint; change: 'failing' | 'disabled' }> = [];
    for (const failures of failedBy.values()) {
      const { endpoint } = failures[0];
      const finishedAt = failures[failures.length - 1].finished.finishedAt as string;
      const { failingSince, started } = await tx.webhooks.noteEndpointFailure(endpoint._environmentId, endpoint._id, finishedAt);
      if (shouldDisable(failingSince, deps.clock.now(), deps.config.webhooks.disableAfterMs)) {
        await tx.webhooks.disableEndpoint(endpoint._environmentId, endpoint._id, disabledReason(failingSince as string, deps.clock.now()), finishedAt);
        changed.push({ endpoint, change: 'disabled' });
        continue;
      }
      if (started) changed.push({ endpoint, change: 'failing' });
      for (const { finished, refused } of failures) {
        const delay = refused ? undefined : retryDelayBefore(deps.config.webhooks.retryDelaysMs, finished.attempt + 1);
        if (delay === undefined) continue;
        retries.push(
          pendingAttempt(deps, {
            environmentId: finished._environmentId,
            endpointId: finished._endpointId,
            webhookId: finished.webhookId,
            eventType: finished.eventType,
            attempt: finished.attempt + 1,
            delayMs: delay,
          }),
        );
      }
    }
    await tx.webhooks.createAttempts(retries);
    return { retries, changed };
  });
  for (const { endpoint, change } of changed) {
    if (change === 'disabled') deps.logger.warn({ endpointId: endpoint._id, environmentId: endpoint._environmentId }, 'webhook endpoint disabled after failing for too long');
    await announceEndpointsChanged(deps, endpoint._environmentId);
  }
  // Health changes are rare; they drop every process's cached endpoint so the next attempt sees them.
  const recovered = new Map<string, WebhookEndpoint>();
  for (const s of sent) if (s.finished.status === 'success' && s.endpoint.failingSince) recovered.set(`${s.endpoint._environmentId}:${s.endpoint._id}`, s.endpoint);
  for (const endpoint of recovered.values()) {
    if (await store.webhooks.clearEndpointFailure(endpoint._environmentId, endpoint._id)) await announceEndpointsChanged(deps, endpoint._environmentId);
  }
  await enqueueAttempts(deps, retries);
}
