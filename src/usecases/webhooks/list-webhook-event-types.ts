import { WEBHOOK_EVENT_DESCRIPTIONS, WEBHOOK_EVENT_TYPES } from '../../domain/webhooks.js';

/** The event catalogue: every type an endpoint can filter on, with what causes it. */
export function listWebhookEventTypes(): Array<{ type: string; description: string }> {
  return WEBHOOK_EVENT_TYPES.map((type) => ({ type, description: WEBHOOK_EVENT_DESCRIPTIONS[type] }));
}
