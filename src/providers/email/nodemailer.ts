import { isIP, type LookupFunction } from 'node:net';
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

/**
 * nodemailer's options. `address`, when given, is the address the host was resolved to by the outbound guard:
 * nodemailer connects to it (an IP host is not resolved again) and still verifies TLS (and sends SNI) for the
 * configured host name, unless the credentials' tlsOptions name another servername.
 */
export function transportOptions(credentials: Credentials, timeoutMs: number, address?: string): SMTPTransport.Options {
  const host = requiredCredential(credentials, 'host', ID);
  const user = optionalCredential(credentials, 'user');
  const password = optionalCredential(credentials, 'password');
  const tls = tlsOptionsOf(credentials);
  return {
    host: address ?? host,
    port: Number(requiredCredential(credentials, 'port', ID)),
    secure: booleanCredential(credentials, 'secure') ?? false,
    requireTLS: booleanCredential(credentials, 'requireTls') ?? false,
    ignoreTLS: booleanCredential(credentials, 'ignoreTls') ?? false,
    tls: address ? { servername: host, ...tls } : tls,
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

/**
 * The outbound guard, before and at connection time. nodemailer takes no custom lookup and would resolve the host
 * again after the check (a DNS-rebinding window), so a host name is resolved once here through the context's
 * guarded lookup, and nodemailer is given that address. Returns it, or undefined when nodemailer is to connect to
 * the host as configured (an IP literal, or a context without a guarded lookup).
 */
async function guard(credentials: Credentials, ctx: ProviderContext): Promise<string | undefined> {
  const host = requiredCredential(credentials, 'host', ID);
  const port = requiredCredential(credentials, 'port', ID);
  await ctx.assertAllowed?.(`smtp://${host.includes(':') ? `[${host}]` : host}:${port}`);
  if (!ctx.guardedLookup || isIP(host)) return undefined;
  return resolveOnce(ctx.guardedLookup, host);
}

/** One address for `host` (IPv4 first, as nodemailer's own resolution prefers), through the guarded lookup. */
function resolveOnce(lookup: LookupFunction, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    lookup(host, { all: true }, (error, answer) => {
      if (error) {
        const code = (error as { code?: string }).code ?? error.message;
        reject(error instanceof ProviderError ? error : new ProviderError(`SMTP: DNS lookup for ${host} failed (${code})`, true));
        return;
      }
      const addresses = (Array.isArray(answer) ? answer : [{ address: answer, family: isIP(answer) }]).filter((a) => isIP(a.address));
      const chosen = addresses.find((a) => a.family === 4) ?? addresses[0];
      if (chosen) resolve(chosen.address);
      else reject(new ProviderError(`SMTP: DNS lookup for ${host} failed (no address)`, true));
    });
  });
}

/** nodemailer is loaded on the first SMTP send or check: a process that never uses SMTP does not hold it (~2 MB). */
let loading: Promise<typeof import('nodemailer')> | undefined;
async function createTransport(options: SMTPTransport.Options) {
  loading ??= import('nodemailer').then((module) => module.default);
  return (await loading).createTransport(options);
}

export const nodemailerProvider: ChannelProvider<'email'> = {
  id: ID,
  channel: 'email',
  async send(credentials, message, ctx) {
    const address = await guard(credentials, ctx);
    const transporter = await createTransport(transportOptions(credentials, ctx.timeoutMs, address));
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
    const address = await guard(credentials, ctx);
    const transporter = await createTransport(transportOptions(credentials, ctx.timeoutMs, address));
    try {
      await transporter.verify();
    } catch (error) {
      throw smtpError(error);
    } finally {
      transporter.close();
    }
  },
};
