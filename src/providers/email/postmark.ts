import { baseUrlOf, requiredCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { callVendor, jsonHeaders, parseJson } from '../vendor-http.js';
import { attachmentBase64, attachmentMime, formatAddress, nonEmpty, senderOf } from './email-parts.js';

/** Postmark: POST /email with `X-Postmark-Server-Token`; recipients are comma-separated strings. */
const ID = 'postmark';
const VENDOR = 'Postmark';
const DEFAULT_BASE_URL = 'https://api.postmarkapp.com';

const joined = (emails: string[] | undefined) => nonEmpty(emails)?.join(',');

export const postmarkProvider: ChannelProvider<'email'> = {
  id: ID,
  channel: 'email',
  async send(credentials, message, ctx) {
    const token = requiredCredential(credentials, 'apiKey', ID);
    const body = {
      From: formatAddress(senderOf(credentials, message, ID)),
      To: joined(message.to),
      Cc: joined(message.cc),
      Bcc: joined(message.bcc),
      Subject: message.subject,
      HtmlBody: message.html,
      TextBody: message.text,
      ReplyTo: message.replyTo,
      Headers: message.headers ? Object.entries(message.headers).map(([Name, Value]) => ({ Name, Value })) : undefined,
      Attachments: nonEmpty(message.attachments)?.map((attachment) => ({
        Name: attachment.filename,
        Content: attachmentBase64(attachment),
        ContentType: attachmentMime(attachment),
      })),
      ...message.overrides,
    };
    const answer = await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/email`, {
      method: 'POST',
      headers: jsonHeaders({ 'x-postmark-server-token': token }),
      body: JSON.stringify(body),
    });
    const json = parseJson<{ MessageID?: string; SubmittedAt?: string }>(answer.text);
    return { id: json?.MessageID, date: json?.SubmittedAt ?? new Date().toISOString(), raw: answer.text };
  },
  /** GET /server: the server the token belongs to. */
  async check(credentials, ctx) {
    const token = requiredCredential(credentials, 'apiKey', ID);
    await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/server`, {
      method: 'GET',
      headers: { accept: 'application/json', 'x-postmark-server-token': token },
    });
  },
};
