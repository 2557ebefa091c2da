import { requiredCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { callVendor, hmacSha256Hex, jsonHeaders, parseJson, WEBHOOK_SIGNATURE_HEADER } from '../vendor-http.js';
import { attachmentBase64, nonEmpty, senderOf } from './email-parts.js';

/**
 * A generic email webhook: POST the email as JSON to `webhookUrl`, signed with
 * `x-novu-signature: <hex HMAC-SHA256 of the exact body, keyed by secretKey>`. An `id` in a JSON answer is kept.
 */
const ID = 'email-webhook';

export const emailWebhookProvider: ChannelProvider<'email'> = {
  id: ID,
  channel: 'email',
  async send(credentials, message, ctx) {
    const sender = senderOf(credentials, message, ID);
    const body = JSON.stringify({
      from: sender.email,
      senderName: sender.name,
      to: message.to,
      cc: nonEmpty(message.cc),
      bcc: nonEmpty(message.bcc),
      replyTo: message.replyTo,
      subject: message.subject,
      html: message.html,
      text: message.text,
      headers: message.headers,
      attachments: nonEmpty(message.attachments)?.map((attachment) => ({
        filename: attachment.filename,
        content: attachmentBase64(attachment),
        mime: attachment.mime,
      })),
      overrides: message.overrides,
    });
    const signature = hmacSha256Hex(requiredCredential(credentials, 'secretKey', ID), body);
    const answer = await callVendor(ctx, 'Email webhook', requiredCredential(credentials, 'webhookUrl', ID), {
      method: 'POST',
      headers: jsonHeaders({ [WEBHOOK_SIGNATURE_HEADER]: signature }),
      body,
    });
    const id = parseJson<{ id?: unknown }>(answer.text)?.id;
    return { id: id === undefined ? undefined : String(id), date: new Date().toISOString(), raw: answer.text };
  },
};
