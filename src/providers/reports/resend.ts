import { createHmac } from 'node:crypto';
import type { ProviderReportedState } from '../../domain/types.js';
import type { DeliveryReportReader } from '../report-ports.js';
import { headerOf, isoOf, jsonBody, record, rejectSignature, report, sameSecret, text } from './report-parts.js';

/**
 * Resend webhooks are signed by Svix: `svix-signature` holds space-separated `v1,<base64 HMAC-SHA256>` of
 * `svix-id.svix-timestamp.body`, keyed with the base64 part of the endpoint's `whsec_` secret
 * (`configurations.inboundWebhookSigningKey`). Timestamps more than 5 minutes away are refused (replays).
 */
const VENDOR = 'Resend';
const TOLERANCE_SECONDS = 5 * 60;

const STATES: Record<string, ProviderReportedState> = {
  'email.delivered': 'delivered',
  'email.bounced': 'bounced',
  'email.complained': 'complained',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
  'email.failed': 'failed',
};

export const resendReports: DeliveryReportReader = {
  providerId: 'resend',
  channel: 'email',
  vendor: VENDOR,
  needsSigningKey: true,
  async read(request, secrets, ctx) {
    const id = headerOf(request.headers, 'svix-id');
    const timestamp = headerOf(request.headers, 'svix-timestamp');
    const signatures = headerOf(request.headers, 'svix-signature');
    if (!id || !timestamp || !signatures) rejectSignature(VENDOR, 'svix-id, svix-timestamp and svix-signature are required');
    const seconds = Number(timestamp);
    if (!Number.isInteger(seconds) || Math.abs(ctx.now() / 1000 - seconds) > TOLERANCE_SECONDS) {
      rejectSignature(VENDOR, 'svix-timestamp is missing or more than 5 minutes away');
    }
    const secret = Buffer.from((secrets.signingKey ?? '').replace(/^whsec_/, ''), 'base64');
    if (secret.length === 0) rejectSignature(VENDOR, 'no signing secret is configured');
    const expected = createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), request.body]))
      .digest('base64');
    const valid = signatures.split(' ').some((entry) => {
      const [version, value] = entry.split(',', 2);
      return version === 'v1' && value !== undefined && sameSecret(value, expected);
    });
    if (!valid) rejectSignature(VENDOR, 'the signature does not verify');

    const event = record(jsonBody(request.body));
    const vendorEvent = text(event.type) ?? '';
    const data = record(event.data);
    const state = STATES[vendorEvent];
    const messageId = text(data.email_id);
    if (!state || !messageId) return { reports: [] };
    return {
      reports: [
        report({
          state,
          vendorEvent,
          messageIds: [messageId],
          eventId: id,
          occurredAt: isoOf(event.created_at),
          reason: text(record(data.bounce).message) ?? text(record(data.failed).reason) ?? text(record(data.click).link),
          raw: request.body.toString('utf8'),
        }),
      ],
    };
  },
};
