import { endpointAccepts, type WebhookAttempt, type WebhookEndpoint } from '../../domain/webhooks.js';
import type { Deps } from '../deps.js';
import { enqueueAttempts, pendingAttempt } from './webhook-attempts.js';

/**
 * The outbox relay (run by the worker): takes up to `limit` recorded events not yet fanned out, makes one pending
 * attempt per enabled endpoint of the event's environment whose filter takes the event type, marks the events
 * dispatched, all in one transaction, then queues the attempts. PostgreSQL workers skip each other's locked rows;
 * a crash before the enqueue leaves pending attempts that sweepWebhookAttempts re-queues. Returns how many events
 * were taken (a full batch means: call again).
 */
export async function fanOutEvents(deps: Deps, limit = 500): Promise<number> {
  const { taken, attempts } = await deps.store.transaction(async (store) => {
    const events = await store.webhooks.claimUndispatchedEvents(limit);
    if (events.length === 0) return { taken: 0, attempts: [] as WebhookAttempt[] };
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
    return { taken: events.length, attempts };
  });
  await enqueueAttempts(deps, attempts);
  return taken;
}
