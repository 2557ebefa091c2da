import type { ProviderReportedState } from '../../domain/types.js';
import type { DeliveryReportReader } from '../report-ports.js';
import { contentEventId, headerOf, isoOf, jsonBody, record, rejectSignature, report, sameSecret, text } from './report-parts.js';

/**
 * Postmark webhooks carry no signature. Herald asks for HTTP Basic credentials in the webhook URL Postmark calls
 * (`https://herald:<key>@host/...`, which Postmark sends as `Authorization: Basic`): the password must equal
 * `configurations.inboundWebhookSigningKey`; the user name is not checked. One event per request.
 */
const VENDOR = 'Postmark';

const STATES: Record<string, ProviderReportedState> = {
  Delivery: 'delivered',
  Bounce: 'bounced',
  SpamComplaint: 'complained',
  Open: 'opened',
  Click: 'clicked',
};

function basicPassword(authorization: string | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

export const postmarkReports: DeliveryReportReader = {
  providerId: 'postmark',
  channel: 'email',
  vendor: VENDOR,
  needsSigningKey: true,
  async read(request, secrets) {
    const password = basicPassword(headerOf(request.headers, 'authorization'));
    if (password === undefined) rejectSignature(VENDOR, 'HTTP Basic credentials are required (put them in the webhook URL)');
    if (!sameSecret(password, secrets.signingKey ?? '')) rejectSignature(VENDOR, 'the credentials do not match');
    const event = record(jsonBody(request.body));
    const vendorEvent = text(event.RecordType) ?? '';
    const state = STATES[vendorEvent];
    const messageId = text(event.MessageID);
    if (!state || !messageId) return { reports: [] };
    const raw = request.body.toString('utf8');
    const bounceType = text(event.Type);
    return {
      reports: [
        report({
          state,
          vendorEvent: bounceType && vendorEvent === 'Bounce' ? `Bounce/${bounceType}` : vendorEvent,
          messageIds: [messageId],
          // Only bounces have an id of their own; a redelivered event has the same body.
          eventId: vendorEvent === 'Bounce' && text(event.ID) ? `bounce:${text(event.ID)}` : contentEventId(raw),
          occurredAt: isoOf(event.DeliveredAt ?? event.BouncedAt ?? event.ReceivedAt),
          reason: text(event.Description) ?? text(event.Details) ?? text(event.OriginalLink),
          raw,
        }),
      ],
    };
  },
};
