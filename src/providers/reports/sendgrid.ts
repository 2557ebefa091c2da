import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { ProviderReportedState } from '../../domain/types.js';
import type { DeliveryReportReader } from '../report-ports.js';
import { contentEventId, headerOf, isoOf, jsonBody, record, rejectSignature, report, text, uniqueIds } from './report-parts.js';

/**
 * SendGrid Event Webhook with Signed Event Webhook Requests: an ECDSA P-256 signature (SHA-256, DER, base64) over the
 * timestamp header followed by the raw body, verified with the public key SendGrid shows for the webhook (base64
 * DER SubjectPublicKeyInfo, or PEM) kept in `configurations.inboundWebhookSigningKey`. The body is an array of events.
 */
const VENDOR = 'SendGrid';
const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

const STATES: Record<string, ProviderReportedState> = {
  delivered: 'delivered',
  bounce: 'bounced',
  dropped: 'failed',
  spamreport: 'complained',
  open: 'opened',
  click: 'clicked',
};

function publicKeyOf(signingKey: string): KeyObject | undefined {
  try {
    const trimmed = signingKey.trim();
    if (trimmed.startsWith('-----BEGIN')) return createPublicKey(trimmed);
    return createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
}

export const sendgridReports: DeliveryReportReader = {
  providerId: 'sendgrid',
  channel: 'email',
  vendor: VENDOR,
  needsSigningKey: true,
  async read(request, secrets) {
    const signature = headerOf(request.headers, SIGNATURE_HEADER);
    const timestamp = headerOf(request.headers, TIMESTAMP_HEADER);
    if (!signature || !timestamp) rejectSignature(VENDOR, `${SIGNATURE_HEADER} and ${TIMESTAMP_HEADER} are required`);
    const key = publicKeyOf(secrets.signingKey ?? '');
    if (!key) rejectSignature(VENDOR, 'the configured verification key is not an ECDSA public key');
    const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), request.body]);
    let valid = false;
    try {
      valid = verify('sha256', signed, key, Buffer.from(signature, 'base64'));
    } catch {
      valid = false;
    }
    if (!valid) rejectSignature(VENDOR, 'the signature does not verify');
    const events = jsonBody(request.body);
    if (!Array.isArray(events)) return { reports: [] };
    return {
      reports: events.flatMap((entry) => {
        const event = record(entry);
        const vendorEvent = text(event.event) ?? '';
        const messageId = text(event.sg_message_id);
        let state = STATES[vendorEvent];
        if (!state || !messageId) return [];
        // A `bounce` of type `blocked` is SendGrid refusing to try (a block list), not the recipient's server bouncing.
        if (vendorEvent === 'bounce' && event.type === 'blocked') state = 'failed';
        const raw = JSON.stringify(event);
        return [
          report({
            state,
            vendorEvent: event.type && vendorEvent === 'bounce' ? `bounce/${String(event.type)}` : vendorEvent,
            // sg_message_id is the X-Message-Id of the send plus `.filter...`/`.recvd-...` after a dot.
            messageIds: uniqueIds(messageId, messageId.split('.filter')[0], messageId.split('.recvd')[0], messageId.split('.')[0]),
            eventId: text(event.sg_event_id) ?? contentEventId(raw),
            occurredAt: isoOf(event.timestamp),
            reason: text(event.reason) ?? text(event.response) ?? text(event.url),
            raw,
          }),
        ];
      }),
    };
  },
};
