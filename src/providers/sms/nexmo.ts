import { baseUrlOf, requiredCredential } from '../credential-values.js';
import { ProviderError, type ChannelProvider } from '../ports.js';
import { callVendor, parseJson } from '../vendor-http.js';

/**
 * Vonage (Nexmo) SMS API: POST https://rest.nexmo.com/sms/json, form-encoded with api_key/api_secret in the
 * body. It answers 200 even on failure; each entry of `messages` carries a `status` ("0" = accepted).
 */
const ID = 'nexmo';
const VENDOR = 'Vonage';
const DEFAULT_BASE_URL = 'https://rest.nexmo.com';
/** 1 = Throttled: the only per-message status Vonage documents as "try again". */
const RETRYABLE_STATUSES = new Set(['1']);

interface VonageAnswer {
  messages?: { status?: string; 'message-id'?: string; 'error-text'?: string }[];
}

export const nexmoProvider: ChannelProvider<'sms'> = {
  id: ID,
  channel: 'sms',
  async send(credentials, message, ctx) {
    const form = new URLSearchParams({
      api_key: requiredCredential(credentials, 'apiKey', ID),
      api_secret: requiredCredential(credentials, 'secretKey', ID),
      from: message.from ?? requiredCredential(credentials, 'from', ID),
      to: message.to.replace(/^\+/, ''),
      text: message.content,
    });
    const answer = await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/sms/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    });
    const first = parseJson<VonageAnswer>(answer.text)?.messages?.[0];
    if (!first || first.status !== '0') {
      const status = first?.status ?? 'unknown';
      throw new ProviderError(
        `Vonage refused the message (status ${status}): ${first?.['error-text'] ?? answer.text}`,
        RETRYABLE_STATUSES.has(status),
        answer.text,
        answer.status,
      );
    }
    return { id: first['message-id'], date: new Date().toISOString(), raw: answer.text };
  },
  /** GET /account/get-balance: authenticated by the key and secret, read-only. */
  async check(credentials, ctx) {
    const query = new URLSearchParams({
      api_key: requiredCredential(credentials, 'apiKey', ID),
      api_secret: requiredCredential(credentials, 'secretKey', ID),
    });
    await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/account/get-balance?${query}`, {
      method: 'GET',
      headers: { accept: 'application/json' },
    });
  },
};
