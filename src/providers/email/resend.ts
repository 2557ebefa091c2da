import { baseUrlOf, requiredCredential } from '../credential-values.js';
import { providerErrorFromStatus } from '../outbound.js';
import type { ChannelProvider } from '../ports.js';
import { callVendor, jsonHeaders, parseJson } from '../vendor-http.js';
import { attachmentBase64, formatAddress, nonEmpty, senderOf } from './email-parts.js';

/** Resend: POST /emails with `Authorization: Bearer <apiKey>`; answers {id}. */
const ID = 'resend';
const VENDOR = 'Resend';
const DEFAULT_BASE_URL = 'https://api.resend.com';

export const resendProvider: ChannelProvider<'email'> = {
  id: ID,
  channel: 'email',
  async send(credentials, message, ctx) {
    const apiKey = requiredCredential(credentials, 'apiKey', ID);
    const body = {
      from: formatAddress(senderOf(credentials, message, ID)),
      to: message.to,
      cc: nonEmpty(message.cc),
      bcc: nonEmpty(message.bcc),
      reply_to: message.replyTo,
      subject: message.subject,
      html: message.html,
      text: message.text,
      headers: message.headers,
      attachments: nonEmpty(message.attachments)?.map((attachment) => ({
        filename: attachment.filename,
        content: attachmentBase64(attachment),
        ...(attachment.mime ? { content_type: attachment.mime } : {}),
      })),
      ...message.overrides,
    };
    const answer = await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/emails`, {
      method: 'POST',
      headers: jsonHeaders({ authorization: `Bearer ${apiKey}` }),
      body: JSON.stringify(body),
    });
    return { id: parseJson<{ id?: string }>(answer.text)?.id, date: new Date().toISOString(), raw: answer.text };
  },
  /**
   * GET /domains. A sending-only key answers 401 `restricted_api_key`: the key is real, so that passes.
   */
  async check(credentials, ctx) {
    const apiKey = requiredCredential(credentials, 'apiKey', ID);
    const answer = await callVendor(
      ctx,
      VENDOR,
      `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/domains`,
      { method: 'GET', headers: jsonHeaders({ authorization: `Bearer ${apiKey}` }) },
      (status) => (status >= 200 && status < 300) || status === 401,
    );
    if (answer.status === 401 && parseJson<{ name?: string }>(answer.text)?.name !== 'restricted_api_key') {
      throw providerErrorFromStatus(answer.status, answer.text, VENDOR);
    }
  },
};
