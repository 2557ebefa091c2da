import { createHmac } from 'node:crypto';
import type { ProviderReportedState } from '../../domain/types.js';
import type { DeliveryReportReader } from '../report-ports.js';
import { contentEventId, isoOf, jsonBody, record, rejectSignature, report, sameSecret, text, uniqueIds } from './report-parts.js';

/**
 * Mailgun webhooks: a JSON body `{signature: {timestamp, token, signature}, "event-data": {...}}`; the signature is
 * the hex HMAC-SHA256 of timestamp + token keyed with the account's HTTP webhook signing key
 * (`configurations.inboundWebhookSigningKey`).
 */
const VENDOR = 'Mailgun';

const STATES: Record<string, ProviderReportedState> = {
  delivered: 'delivered',
  complained: 'complained',
  opened: 'opened',
  clicked: 'clicked',
  rejected: 'failed',
};

export const mailgunReports: DeliveryReportReader = {
  providerId: 'mailgun',
  channel: 'email',
  vendor: VENDOR,
  needsSigningKey: true,
  async read(request, secrets) {
    const body = record(jsonBody(request.body));
    const signature = record(body.signature);
    const timestamp = text(signature.timestamp);
    const token = text(signature.token);
    const sent = text(signature.signature);
    if (!timestamp || !token || !sent) rejectSignature(VENDOR, 'signature.timestamp, signature.token and signature.signature are required');
    const expected = createHmac('sha256', secrets.signingKey ?? '').update(timestamp + token).digest('hex');
    if (!sameSecret(expected, sent.toLowerCase())) rejectSignature(VENDOR, 'the signature does not verify');

    const event = record(body['event-data']);
    const vendorEvent = text(event.event) ?? '';
    // `failed` is permanent (a bounce) or temporary (Mailgun still retries: nothing to record yet).
    const state: ProviderReportedState | undefined =
      vendorEvent === 'failed' ? (event.severity === 'permanent' ? 'bounced' : undefined) : STATES[vendorEvent];
    const messageId = text(record(record(event.message).headers)['message-id']);
    if (!state || !messageId) return { reports: [] };
    const raw = JSON.stringify(event);
    const status = record(event['delivery-status']);
    const bare = messageId.replace(/^<|>$/g, '');
    return {
      reports: [
        report({
          state,
          vendorEvent: vendorEvent === 'failed' ? `failed/${String(event.severity)}` : vendorEvent,
          // Mailgun's send answers `<id@domain>`; events carry the id without the brackets.
          messageIds: uniqueIds(`<${bare}>`, bare),
          eventId: text(event.id) ?? contentEventId(raw),
          occurredAt: isoOf(event.timestamp),
          reason: text(status.description) ?? text(status.message) ?? text(event.reason) ?? text(event.url),
          raw,
        }),
      ],
    };
  },
};
