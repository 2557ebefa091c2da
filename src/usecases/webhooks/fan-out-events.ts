import { endpointAccepts, type WebhookAttempt, type WebhookEndpoint, type WebhookEventBody } from '../../domain/webhooks.js';
import type { Deps } from '../deps.js';
import { deliverAttempts } from './deliver-webhook.js';
import { pendingAttempt } from './webhook-attempts.js';

/**
 * The outbox relay (run by the worker): takes up to `limit` recorded events not yet fanned out, makes one pending
 * attempt per enabled endpoint of the event's environment whose filter takes the event type, marks the events
 * dispatched, all in one transaction, then sends those first attempts itself as one batch (deliverAttempts): no queue
 * job per event. PostgreSQL workers skip each other's locked rows; a crash before the outcomes are written leaves
 * pending attempts that sweepWebhookAttempts re-queues (any worker then sends them). Returns how many events were
 * taken (a full batch means: call again).
 */
export async function fanOutEvents(deps: Deps, limit = 500, lanes?: () => number): Promise<number> {
  const { events, attempts } = await deps.store.transaction(async (store) => {
    const events = await store.webhooks.claimUndispatchedEvents(limit);
    if (events.length === 0) return { events, attempts: [] as WebhookAttempt[] };
    const endpointsOf = new Map<string, WebhookEndpoint[]>();
    const attempts: WebhookAttempt[] = [];
    for (const event of events) {
      let endpoints = endpointsOf.get(event.environmentId);
      if (!endpoints) {
        endpoints = await store.webhooks.listEndpoints(event.environmentId, { enabledOnly: true });
        endpointsOf.set(event.environmentId, endpoints);
      }
      for (const endpoint of endpoints) {
        if (!endpointAccepts(endpoint.eventTypes, event.type)) continue;
        attempts.push(
          pendingAttempt(deps, {
            environmentId: event.environmentId,
            endpointId: endpoint._id,
            webhookId: event.id,
            eventType: event.type,
            attempt: 1,
            delayMs: deps.config.webhooks.retryDelaysMs[0] ?? 0,
          }),
        );
      }
    }
    await store.webhooks.createAttempts(attempts);
    await store.webhooks.markEventsDispatched(events.map((event) => event.id));
    return { events, attempts };
  });
  await deliverAttempts(deps, attempts, new Map<string, WebhookEventBody>(events.map((event) => [event.id, event])), lanes);
  return events.length;
}
