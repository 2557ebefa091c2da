import { newId } from '../../domain/ids.js';
import type { WebhookAttempt } from '../../domain/webhooks.js';
import { dedupeKeys, JOB_NAMES, type DeliverWebhookPayload } from '../../queue/jobs.js';
import type { Deps } from '../deps.js';

/** A new pending attempt of one event to one endpoint, due `delayMs` from now. */
export function pendingAttempt(
  deps: Pick<Deps, 'clock'>,
  input: { environmentId: string; endpointId: string; webhookId: string; eventType: string; attempt: number; delayMs: number },
): WebhookAttempt {
  const now = deps.clock.now();
  return {
    _id: newId(now),
    _environmentId: input.environmentId,
    _endpointId: input.endpointId,
    webhookId: input.webhookId,
    eventType: input.eventType,
    attempt: input.attempt,
    status: 'pending',
    durationMs: 0,
    responseBodySnippet: '',
    dueAt: new Date(now + input.delayMs).toISOString(),
    createdAt: new Date(now).toISOString(),
  };
}

/**
 * Queues the jobs of stored pending attempts (after their commit). `retry` tags a sweep's re-enqueue so it is not
 * taken for the original job (a deduplicated key would be a no-op while the first is known to the queue).
 */
export async function enqueueAttempts(deps: Pick<Deps, 'queue' | 'clock'>, attempts: WebhookAttempt[], retry?: string): Promise<void> {
  if (attempts.length === 0) return;
  const now = deps.clock.now();
  const jobs = attempts.map((attempt) => ({
    payload: { environmentId: attempt._environmentId, attemptId: attempt._id } satisfies DeliverWebhookPayload,
    options: {
      delayMs: Math.max(0, Date.parse(attempt.dueAt) - now),
      // The job only fails on infrastructure errors (the receiver's failures are attempts of their own).
      attempts: 3,
      dedupeKey: dedupeKeys.webhookAttempt(attempt._id) + (retry ? `:${retry}` : ''),
    },
  }));
  if (jobs.length === 1) await deps.queue.enqueue(JOB_NAMES.deliverWebhook, jobs[0].payload, jobs[0].options);
  else await deps.queue.enqueueMany(JOB_NAMES.deliverWebhook, jobs);
}
