import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Credentials } from '../../domain/types.js';
import { booleanCredential, optionalCredential, requiredCredential } from '../credential-values.js';
import { ProviderError, type ChannelProvider, type ProviderContext } from '../ports.js';
import { formatAddress, senderOf, toMailOptions } from './email-parts.js';

/** SMTP through nodemailer. Credentials: host, port, secure, requireTls, ignoreTls, tlsOptions, user, password, from, senderName. */
const ID = 'nodemailer';

/** Transient SMTP conditions: network trouble, timeouts and 4xx replies ("try again later"). */
const RETRYABLE_SMTP_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNRESET', 'ECONNREFUSED']);

function tlsOptionsOf(credentials: Credentials): Record<string, unknown> | undefined {
  const value = credentials.tlsOptions;
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'object') return value as Record<string, unknown>;
  try {
    return JSON.parse(String(value)) as Record<string, unknown>;
  } catch {
    throw new ProviderError(`${ID}: credential "tlsOptions" is not a JSON object`, false);
  }
}

export function transportOptions(credentials: Credentials, timeoutMs: number): SMTPTransport.Options {
  const user = optionalCredential(credentials, 'user');
  const password = optionalCredential(credentials, 'password');
  return {
    host: requiredCredential(credentials, 'host', ID),
    port: Number(requiredCredential(credentials, 'port', ID)),
    secure: booleanCredential(credentials, 'secure') ?? false,
    requireTLS: booleanCredential(credentials, 'requireTls') ?? false,
    ignoreTLS: booleanCredential(credentials, 'ignoreTls') ?? false,
    tls: tlsOptionsOf(credentials),
    auth: user ? { user, pass: password } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  };
}

function smtpError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  const smtp = error as { code?: string; responseCode?: number; response?: string; message?: string };
  const transient = smtp.responseCode !== undefined ? smtp.responseCode >= 400 && smtp.responseCode < 500 : false;
  const retryable = transient || (smtp.code !== undefined && RETRYABLE_SMTP_CODES.has(smtp.code));
  return new ProviderError(`SMTP: ${smtp.message ?? String(error)}`, retryable, smtp.response, smtp.responseCode);
}

async function guard(credentials: Credentials, ctx: ProviderContext): Promise<void> {
  const host = requiredCredential(credentials, 'host', ID);
  const port = requiredCredential(credentials, 'port', ID);
  await ctx.assertAllowed?.(`smtp://${host.includes(':') ? `[${host}]` : host}:${port}`);
}

export const nodemailerProvider: ChannelProvider<'email'> = {
  id: ID,
  channel: 'email',
  async send(credentials, message, ctx) {
    await guard(credentials, ctx);
    const transporter = nodemailer.createTransport(transportOptions(credentials, ctx.timeoutMs));
    try {
      const info = await transporter.sendMail(toMailOptions(formatAddress(senderOf(credentials, message, ID)), message));
      return { id: info.messageId, date: new Date().toISOString(), raw: info.response };
    } catch (error) {
      throw smtpError(error);
    } finally {
      transporter.close();
    }
  },
  /** Connects and authenticates (SMTP verify) without sending anything. */
  async check(credentials, ctx) {
    await guard(credentials, ctx);
    const transporter = nodemailer.createTransport(transportOptions(credentials, ctx.timeoutMs));
    try {
      await transporter.verify();
    } catch (error) {
      throw smtpError(error);
    } finally {
      transporter.close();
    }
  },
};
