import { createVerify } from 'node:crypto';
import type { ProviderReportedState } from '../../domain/types.js';
import type { DeliveryReportReader } from '../report-ports.js';
import { isoOf, jsonBody, record, rejectSignature, report, sameSecret, text } from './report-parts.js';

/**
 * Amazon SES event notifications through an SNS topic subscribed over HTTPS. SNS signs each message (SignatureVersion
 * 1: SHA1withRSA, 2: SHA256withRSA) over `name\nvalue\n` of fixed fields, with a certificate fetched only from an SNS
 * host (providers/reports/sns.ts). An SNS signature proves AWS sent it, not that it is your topic: the topic ARN must
 * equal `configurations.inboundWebhookSigningKey`. A SubscriptionConfirmation is confirmed once verified.
 */
const VENDOR = 'Amazon SES';

const NOTIFICATION_FIELDS = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'];
const CONFIRMATION_FIELDS = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];

/** SES event publishing (`eventType`) and identity notifications (`notificationType`) name events alike. */
const STATES: Record<string, ProviderReportedState> = {
  Delivery: 'delivered',
  Bounce: 'bounced',
  Complaint: 'complained',
  Open: 'opened',
  Click: 'clicked',
  Reject: 'failed',
  'Rendering Failure': 'failed',
};

/** The text SNS signs for a message of this type. */
export function snsSignedText(message: Record<string, unknown>): string {
  const fields = message.Type === 'Notification' ? NOTIFICATION_FIELDS : CONFIRMATION_FIELDS;
  return fields
    .filter((field) => typeof message[field] === 'string')
    .map((field) => `${field}\n${String(message[field])}\n`)
    .join('');
}

function reasonOf(event: Record<string, unknown>, kind: string): string | undefined {
  const bounce = record(event.bounce);
  if (kind === 'Bounce') {
    const recipient = record((bounce.bouncedRecipients as unknown[] | undefined)?.[0]);
    return [text(bounce.bounceType), text(bounce.bounceSubType), text(recipient.diagnosticCode)].filter(Boolean).join(' ') || undefined;
  }
  if (kind === 'Complaint') return text(record(event.complaint).complaintFeedbackType);
  if (kind === 'Reject') return text(record(event.reject).reason);
  if (kind === 'Rendering Failure') return text(record(event.failure).errorMessage);
  if (kind === 'Click') return text(record(event.click).link);
  return undefined;
}

function occurredAtOf(event: Record<string, unknown>, kind: string): string | undefined {
  const part = record(event[kind.charAt(0).toLowerCase() + kind.slice(1)]);
  return isoOf(part.timestamp);
}

export const sesReports: DeliveryReportReader = {
  providerId: 'ses',
  channel: 'email',
  vendor: VENDOR,
  needsSigningKey: true,
  async read(request, secrets, ctx) {
    const message = record(jsonBody(request.body));
    const type = text(message.Type);
    const signature = text(message.Signature);
    const certUrl = text(message.SigningCertURL) ?? text(message.SigningCertUrl);
    const version = text(message.SignatureVersion);
    if (!type || !signature || !certUrl || (version !== '1' && version !== '2')) {
      rejectSignature(VENDOR, 'an SNS message with Type, Signature, SignatureVersion 1 or 2 and SigningCertURL is required');
    }
    // The topic first: a message of someone else's topic is refused before any certificate is fetched.
    if (!sameSecret(text(message.TopicArn) ?? '', secrets.signingKey ?? '')) rejectSignature(VENDOR, 'TopicArn is not the configured topic');
    const certificate = await ctx.sns.certificate(certUrl);
    const verifier = createVerify(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
    verifier.update(snsSignedText(message), 'utf8');
    let valid = false;
    try {
      valid = verifier.verify(certificate, signature, 'base64');
    } catch {
      valid = false;
    }
    if (!valid) rejectSignature(VENDOR, 'the SNS signature does not verify');

    if (type === 'SubscriptionConfirmation') {
      const subscribeUrl = text(message.SubscribeURL);
      if (!subscribeUrl) rejectSignature(VENDOR, 'SubscribeURL is missing');
      return { confirmSubscription: subscribeUrl };
    }
    if (type !== 'Notification') return { reports: [] };
    const raw = text(message.Message) ?? '';
    let event: Record<string, unknown>;
    try {
      event = record(JSON.parse(raw));
    } catch {
      return { reports: [] };
    }
    const kind = text(event.eventType) ?? text(event.notificationType) ?? '';
    const state = STATES[kind];
    const messageId = text(record(event.mail).messageId);
    if (!state || !messageId) return { reports: [] };
    return {
      reports: [
        report({
          state,
          vendorEvent: kind,
          messageIds: [messageId],
          eventId: text(message.MessageId) ?? messageId + kind,
          occurredAt: occurredAtOf(event, kind),
          reason: reasonOf(event, kind),
          raw: request.body.toString('utf8'),
        }),
      ],
    };
  },
};
