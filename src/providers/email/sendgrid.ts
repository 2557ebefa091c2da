import { baseUrlOf, requiredCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { callVendor, jsonHeaders } from '../vendor-http.js';
import { attachmentBase64, attachmentMime, nonEmpty, senderOf } from './email-parts.js';

/** SendGrid v3 Mail Send: POST /v3/mail/send, `Authorization: Bearer <apiKey>`, answers 202 with X-Message-Id. */
const ID = 'sendgrid';
const VENDOR = 'SendGrid';
const DEFAULT_BASE_URL = 'https://api.sendgrid.com';

const toAddresses = (emails: string[] | undefined) => nonEmpty(emails)?.map((email) => ({ email }));

export const sendgridProvider: ChannelProvider<'email'> = {
  id: ID,
  channel: 'email',
  async send(credentials, message, ctx) {
    const apiKey = requiredCredential(credentials, 'apiKey', ID);
    // SendGrid requires text/plain before text/html in `content`.
    const content = [
      ...(message.text ? [{ type: 'text/plain', value: message.text }] : []),
      { type: 'text/html', value: message.html },
    ];
    const body = {
      personalizations: [{ to: toAddresses(message.to), cc: toAddresses(message.cc), bcc: toAddresses(message.bcc) }],
      from: senderOf(credentials, message, ID),
      reply_to: message.replyTo ? { email: message.replyTo } : undefined,
      subject: message.subject,
      content,
      attachments: nonEmpty(message.attachments)?.map((attachment) => ({
        content: attachmentBase64(attachment),
        filename: attachment.filename,
        type: attachmentMime(attachment),
        disposition: 'attachment',
      })),
      headers: message.headers,
      ...message.overrides,
    };
    const answer = await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/v3/mail/send`, {
      method: 'POST',
      headers: jsonHeaders({ authorization: `Bearer ${apiKey}` }),
      body: JSON.stringify(body),
    });
    return { id: answer.headers.get('x-message-id') ?? undefined, date: new Date().toISOString(), raw: answer.text };
  },
  /** GET /v3/scopes: an authenticated read any valid key may make. */
  async check(credentials, ctx) {
    const apiKey = requiredCredential(credentials, 'apiKey', ID);
    await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/v3/scopes`, {
      method: 'GET',
      headers: jsonHeaders({ authorization: `Bearer ${apiKey}` }),
    });
  },
};
