import { requiredCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { callVendor, hmacSha256Hex, jsonHeaders, parseJson, WEBHOOK_SIGNATURE_HEADER } from '../vendor-http.js';
import { requireTargets, settleTokenOutcomes, tokenSucceeded } from './token-outcomes.js';

/**
 * A generic push webhook: POST JSON {target, title, content, payload, overrides} to `webhookUrl`, signed with
 * `x-novu-signature: <hex HMAC-SHA256 of the exact body, keyed by secretKey>`. A 2xx delivers every token.
 */
const ID = 'push-webhook';

export const pushWebhookProvider: ChannelProvider<'push'> = {
  id: ID,
  channel: 'push',
  async send(credentials, message, ctx) {
    const tokens = requireTargets(message.target, ID);
    const body = JSON.stringify({
      target: tokens,
      title: message.title,
      content: message.content,
      payload: message.payload,
      overrides: message.overrides,
    });
    const signature = hmacSha256Hex(requiredCredential(credentials, 'secretKey', ID), body);
    const answer = await callVendor(ctx, 'Push webhook', requiredCredential(credentials, 'webhookUrl', ID), {
      method: 'POST',
      headers: jsonHeaders({ [WEBHOOK_SIGNATURE_HEADER]: signature }),
      body,
    });
    const id = parseJson<{ id?: unknown }>(answer.text)?.id;
    const messageId = id === undefined ? undefined : String(id);
    return settleTokenOutcomes(tokens.map((token) => tokenSucceeded(token, messageId)), answer.text);
  },
};
