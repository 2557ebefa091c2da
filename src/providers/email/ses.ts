import type { Credentials } from '../../domain/types.js';
import { signRequest } from '../aws-sigv4.js';
import { optionalCredential, requiredCredential } from '../credential-values.js';
import type { ChannelProvider, EmailMessage, ProviderContext } from '../ports.js';
import { callVendor, parseJson } from '../vendor-http.js';
import { formatAddress, nonEmpty, senderOf, toMailOptions } from './email-parts.js';

/**
 * Amazon SES v2 SendEmail: POST /v2/email/outbound-emails on email.{region}.amazonaws.com, signed with SigV4
 * (service `ses`). Credentials: apiKey = access key id, secretKey = secret access key, region, optional
 * sessionToken. Simple content for plain mails; a raw MIME message (built by nodemailer) when there are
 * attachments or custom headers, which Simple content cannot carry everywhere.
 */
const ID = 'ses';
const VENDOR = 'Amazon SES';

function endpointOf(credentials: Credentials): string {
  const region = requiredCredential(credentials, 'region', ID);
  return (optionalCredential(credentials, 'baseUrl') ?? `https://email.${region}.amazonaws.com`).replace(/\/+$/, '');
}

async function signedCall(credentials: Credentials, ctx: ProviderContext, method: string, path: string, body: string) {
  const url = new URL(`${endpointOf(credentials)}${path}`);
  const headers = signRequest(
    { method, url, headers: method === 'GET' ? {} : { 'content-type': 'application/json' }, body },
    {
      accessKeyId: requiredCredential(credentials, 'apiKey', ID),
      secretAccessKey: requiredCredential(credentials, 'secretKey', ID),
      sessionToken: optionalCredential(credentials, 'sessionToken'),
      region: requiredCredential(credentials, 'region', ID),
      service: 'ses',
    },
  );
  // fetch sets Host itself, from the same URL that was signed.
  delete headers.host;
  return callVendor(ctx, VENDOR, url.toString(), { method, headers, body: method === 'GET' ? undefined : body });
}

async function rawMime(from: string, message: EmailMessage): Promise<string> {
  // Loaded on first use (only messages with attachments or headers need it), like nodemailer itself (nodemailer.ts).
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer/index.js');
  const composer = new MailComposer(toMailOptions(from, message));
  const mime = await composer.compile().build();
  return mime.toString('base64');
}

async function contentOf(from: string, message: EmailMessage): Promise<Record<string, unknown>> {
  if (nonEmpty(message.attachments) || (message.headers && Object.keys(message.headers).length > 0)) {
    return { Raw: { Data: await rawMime(from, message) } };
  }
  return {
    Simple: {
      Subject: { Data: message.subject, Charset: 'UTF-8' },
      Body: {
        Html: { Data: message.html, Charset: 'UTF-8' },
        ...(message.text ? { Text: { Data: message.text, Charset: 'UTF-8' } } : {}),
      },
    },
  };
}

export const sesProvider: ChannelProvider<'email'> = {
  id: ID,
  channel: 'email',
  async send(credentials, message, ctx) {
    const from = formatAddress(senderOf(credentials, message, ID));
    const body = {
      FromEmailAddress: from,
      Destination: {
        ToAddresses: message.to,
        CcAddresses: nonEmpty(message.cc),
        BccAddresses: nonEmpty(message.bcc),
      },
      ReplyToAddresses: message.replyTo ? [message.replyTo] : undefined,
      Content: await contentOf(from, message),
      ConfigurationSetName: optionalCredential(credentials, 'configurationSetName'),
    };
    const answer = await signedCall(credentials, ctx, 'POST', '/v2/email/outbound-emails', JSON.stringify(body));
    return { id: parseJson<{ MessageId?: string }>(answer.text)?.MessageId, date: new Date().toISOString(), raw: answer.text };
  },
  /** GetAccount: a signed read that proves the key pair and region. */
  async check(credentials, ctx) {
    await signedCall(credentials, ctx, 'GET', '/v2/email/account', '');
  },
};
