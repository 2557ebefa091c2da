import type { Credentials } from '../../domain/types.js';
import { optionalCredential } from '../credential-values.js';
import { ProviderError, type ChatMessage, type ProviderContext, type SendResult } from '../ports.js';
import { callVendor, jsonHeaders } from '../vendor-http.js';

/** The subscriber's webhook URL (channel credentials) wins over the integration's. */
export function webhookUrlOf(credentials: Credentials, message: ChatMessage, providerId: string): string {
  const url = message.webhookUrl ?? optionalCredential(credentials, 'webhookUrl');
  if (!url) {
    throw new ProviderError(`${providerId}: no webhook URL in the subscriber's channel credentials or the integration`, false);
  }
  return url;
}

/** POSTs a JSON body to a chat webhook; the answer's text is kept as the raw record. */
export async function postToWebhook(
  ctx: ProviderContext,
  vendor: string,
  url: string,
  body: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<SendResult & { text: string }> {
  const payload = JSON.stringify(body);
  const answer = await callVendor(ctx, vendor, url, { method: 'POST', headers: jsonHeaders(extraHeaders), body: payload });
  return { date: new Date().toISOString(), raw: answer.text, text: answer.text };
}
