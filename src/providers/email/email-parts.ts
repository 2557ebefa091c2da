import type { Credentials } from '../../domain/types.js';
import { optionalCredential, requiredCredential } from '../credential-values.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { EmailAttachment, EmailMessage } from '../ports.js';

export interface Sender {
  email: string;
  name?: string;
}

/** The message's from/senderName win over the integration's defaults. */
export function senderOf(credentials: Credentials, message: EmailMessage, providerId: string): Sender {
  const email = message.from ?? requiredCredential(credentials, 'from', providerId);
  const name = message.senderName ?? optionalCredential(credentials, 'senderName');
  return { email, name };
}

/** `"Name" <email>` (RFC 5322), or the bare address without a name. */
export function formatAddress(sender: Sender): string {
  if (!sender.name) return sender.email;
  return `"${sender.name.replace(/["\\]/g, '\\$&')}" <${sender.email}>`;
}

/** Attachments arrive as base64 strings or raw bytes; vendors' JSON APIs want base64. */
export function attachmentBase64(attachment: EmailAttachment): string {
  return typeof attachment.content === 'string'
    ? attachment.content
    : Buffer.from(attachment.content).toString('base64');
}

export function attachmentBytes(attachment: EmailAttachment): Buffer {
  return typeof attachment.content === 'string'
    ? Buffer.from(attachment.content, 'base64')
    : Buffer.from(attachment.content);
}

export function attachmentMime(attachment: EmailAttachment): string {
  return attachment.mime ?? 'application/octet-stream';
}

export function nonEmpty<T>(list: T[] | undefined): T[] | undefined {
  return list && list.length > 0 ? list : undefined;
}

/** The message as nodemailer mail options: what SMTP sends, and the MIME that SES's raw content carries. */
export function toMailOptions(from: string, message: EmailMessage): Mail.Options {
  return {
    from,
    to: message.to,
    cc: message.cc,
    bcc: message.bcc,
    replyTo: message.replyTo,
    subject: message.subject,
    html: message.html,
    text: message.text,
    headers: message.headers,
    attachments: message.attachments?.map((attachment) => ({
      filename: attachment.filename,
      content: attachmentBytes(attachment),
      contentType: attachment.mime,
    })),
  };
}
