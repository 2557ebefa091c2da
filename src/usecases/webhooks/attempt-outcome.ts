import type { WebhookResponse } from '../../webhooks/ports.js';

export type AttemptOutcome = 'success' | 'failed';

/**
 * The one place that decides what a delivery attempt's answer means: a 2xx is a success; any other status, a
 * timeout, a connection error or a refused target is a failure (retried on the schedule, except a refused target).
 * The caller counts the outcome (herald_webhook_deliveries_total{status}) right after this decision.
 */
export function decideAttemptOutcome(response: WebhookResponse): AttemptOutcome {
  return response.statusCode !== undefined && response.statusCode >= 200 && response.statusCode < 300 ? 'success' : 'failed';
}
