import { createHmac } from 'node:crypto';
import type { ProviderReportedState } from '../../domain/types.js';
import { optionalCredential } from '../credential-values.js';
import type { DeliveryReportReader } from '../report-ports.js';
import { headerOf, rejectSignature, report, sameSecret } from './report-parts.js';

/**
 * Twilio status callbacks (the StatusCallback of a sent message): a form-encoded POST; `X-Twilio-Signature` is the
 * base64 HMAC-SHA1, keyed with the account's auth token (the integration's `token` credential), of the full URL
 * Twilio called followed by each form parameter's name and value, sorted by name. The URL must be the one Twilio
 * sees: behind a proxy, set HERALD_PUBLIC_URL.
 */
const VENDOR = 'Twilio';

const STATES: Record<string, ProviderReportedState> = {
  delivered: 'delivered',
  undelivered: 'failed',
  failed: 'failed',
  read: 'opened',
};

/** The string Twilio signs: the URL, then name+value of every parameter, names sorted. */
export function twilioSignedText(url: string, params: URLSearchParams): string {
  const names = [...new Set(params.keys())].sort();
  return url + names.map((name) => params.getAll(name).sort().map((value) => name + value).join('')).join('');
}

export const twilioReports: DeliveryReportReader = {
  providerId: 'twilio',
  channel: 'sms',
  vendor: VENDOR,
  needsSigningKey: false,
  async read(request, secrets) {
    const signature = headerOf(request.headers, 'x-twilio-signature');
    if (!signature) rejectSignature(VENDOR, 'X-Twilio-Signature is required');
    const token = optionalCredential(secrets.credentials, 'token');
    if (!token) rejectSignature(VENDOR, 'the integration has no auth token to verify with');
    const params = new URLSearchParams(request.body.toString('utf8'));
    const expected = createHmac('sha1', token).update(twilioSignedText(request.url, params), 'utf8').digest('base64');
    if (!sameSecret(expected, signature)) rejectSignature(VENDOR, 'the signature does not verify (is HERALD_PUBLIC_URL the URL Twilio calls?)');

    const vendorEvent = params.get('MessageStatus') ?? params.get('SmsStatus') ?? '';
    const sid = params.get('MessageSid') ?? params.get('SmsSid') ?? '';
    const state = STATES[vendorEvent];
    if (!state || !sid) return { reports: [] };
    const errorCode = params.get('ErrorCode');
    return {
      reports: [
        report({
          state,
          vendorEvent,
          messageIds: [sid],
          // Twilio marks its retries of one callback with the same idempotency token; a status is reported once per sid.
          eventId: headerOf(request.headers, 'i-twilio-idempotency-token') ?? `${sid}:${vendorEvent}`,
          reason: errorCode ? `error ${errorCode}${params.get('ErrorMessage') ? ` ${params.get('ErrorMessage')}` : ''}` : undefined,
          raw: request.body.toString('utf8'),
        }),
      ],
    };
  },
};
