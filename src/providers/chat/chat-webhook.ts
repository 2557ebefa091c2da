import { optionalCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { hmacSha256Hex, parseJson, WEBHOOK_SIGNATURE_HEADER } from '../vendor-http.js';
import { postToWebhook, webhookUrlOf } from './webhook-target.js';

/**
 * A generic chat webhook: POST JSON {content, channel?, overrides?}. With a `secretKey`, the exact body is
 * signed: `x-novu-signature: <hex HMAC-SHA256(body, secretKey)>`. An `id` in a JSON answer is kept.
 */
export const chatWebhookProvider: ChannelProvider<'chat'> = {
  id: 'chat-webhook',
  channel: 'chat',
  async send(credentials, message, ctx) {
    const url = webhookUrlOf(credentials, message, 'chat-webhook');
    const body = { content: message.content, channel: message.channel, overrides: message.overrides };
    const secretKey = optionalCredential(credentials, 'secretKey');
    const headers: Record<string, string> = {};
    if (secretKey) headers[WEBHOOK_SIGNATURE_HEADER] = hmacSha256Hex(secretKey, JSON.stringify(body));
    const answer = await postToWebhook(ctx, 'Chat webhook', url, body, headers);
    const id = parseJson<{ id?: unknown }>(answer.text)?.id;
    return { id: id === undefined ? undefined : String(id), date: answer.date, raw: answer.raw };
  },
};
