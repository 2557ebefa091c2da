import { baseUrlOf, requiredCredential } from '../credential-values.js';
import type { ChannelProvider } from '../ports.js';
import { basicAuth, callVendor, parseJson } from '../vendor-http.js';
import { attachmentBytes, attachmentMime, formatAddress, nonEmpty, senderOf } from './email-parts.js';

/**
 * Mailgun Messages API: POST /v3/{domain}/messages, basic auth `api:<apiKey>`, form-encoded
 * (multipart/form-data when there are attachments). EU accounts set baseUrl https://api.eu.mailgun.net.
 */
const ID = 'mailgun';
const VENDOR = 'Mailgun';
const DEFAULT_BASE_URL = 'https://api.mailgun.net';

export const mailgunProvider: ChannelProvider<'email'> = {
  id: ID,
  channel: 'email',
  async send(credentials, message, ctx) {
    const apiKey = requiredCredential(credentials, 'apiKey', ID);
    const domain = requiredCredential(credentials, 'domain', ID);
    const fields: [string, string][] = [
      ['from', formatAddress(senderOf(credentials, message, ID))],
      ...message.to.map((to): [string, string] => ['to', to]),
      ...(message.cc ?? []).map((cc): [string, string] => ['cc', cc]),
      ...(message.bcc ?? []).map((bcc): [string, string] => ['bcc', bcc]),
      ['subject', message.subject],
      ['html', message.html],
      ...(message.text ? [['text', message.text] as [string, string]] : []),
      ...(message.replyTo ? [['h:Reply-To', message.replyTo] as [string, string]] : []),
      ...Object.entries(message.headers ?? {}).map(([name, value]): [string, string] => [`h:${name}`, value]),
    ];
    let body: URLSearchParams | FormData;
    if (nonEmpty(message.attachments)) {
      const form = new FormData();
      for (const [name, value] of fields) form.append(name, value);
      for (const attachment of message.attachments ?? []) {
        form.append('attachment', new Blob([new Uint8Array(attachmentBytes(attachment))], { type: attachmentMime(attachment) }), attachment.filename);
      }
      body = form;
    } else {
      body = new URLSearchParams(fields);
    }
    const url = `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/v3/${encodeURIComponent(domain)}/messages`;
    // fetch sets the form content type (with the multipart boundary) from the body.
    const answer = await callVendor(ctx, VENDOR, url, {
      method: 'POST',
      headers: { authorization: basicAuth('api', apiKey), accept: 'application/json' },
      body,
    });
    return { id: parseJson<{ id?: string }>(answer.text)?.id, date: new Date().toISOString(), raw: answer.text };
  },
  /** GET /v3/domains/{domain}: authenticated, read-only, and proves the domain belongs to the key. */
  async check(credentials, ctx) {
    const apiKey = requiredCredential(credentials, 'apiKey', ID);
    const domain = requiredCredential(credentials, 'domain', ID);
    await callVendor(ctx, VENDOR, `${baseUrlOf(credentials, DEFAULT_BASE_URL)}/v3/domains/${encodeURIComponent(domain)}`, {
      method: 'GET',
      headers: { authorization: basicAuth('api', apiKey), accept: 'application/json' },
    });
  },
};
