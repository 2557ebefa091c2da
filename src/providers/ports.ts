import type { LookupFunction } from 'node:net';
import type { Credentials, DeliveryChannel } from '../domain/types.js';

/**
 * The contract every delivery provider implements: one file per vendor under providers/<channel>/.
 * Providers speak the vendor's real wire format; every endpoint they call is overridable through
 * credentials (`baseUrl`, `host`/`port`, token URLs) so tests can point them at local fakes.
 */

export interface EmailAttachment {
  filename: string;
  /** Base64 or raw bytes. */
  content: string | Uint8Array;
  mime?: string;
}

export interface EmailMessage {
  to: string[];
  subject: string;
  html: string;
  text?: string;
  from?: string;
  senderName?: string;
  replyTo?: string;
  cc?: string[];
  bcc?: string[];
  attachments?: EmailAttachment[];
  headers?: Record<string, string>;
  /** Provider-specific fields from the trigger's `overrides`. */
  overrides?: Record<string, unknown>;
}

export interface SmsMessage {
  to: string;
  content: string;
  from?: string;
  overrides?: Record<string, unknown>;
}

export interface ChatMessage {
  /** From the subscriber's channel credentials, else the integration's credentials. */
  webhookUrl?: string;
  /** A channel name/id for providers that post through an API rather than a webhook. */
  channel?: string;
  content: string;
  overrides?: Record<string, unknown>;
}

export interface PushMessage {
  /** Device tokens from the subscriber's channel credentials. */
  target: string[];
  title: string;
  content: string;
  payload: Record<string, unknown>;
  overrides?: Record<string, unknown>;
}

export interface MessageByChannel {
  email: EmailMessage;
  sms: SmsMessage;
  chat: ChatMessage;
  push: PushMessage;
}

export interface TokenResult {
  token: string;
  ok: boolean;
  /** The vendor said the token is unregistered/invalid: remove it from the subscriber. */
  invalid?: boolean;
  error?: string;
}

export interface SendResult {
  /** The vendor's message id, when it returns one. */
  id?: string;
  date?: string;
  /** The vendor's raw answer (body text), recorded on the execution detail. */
  raw?: string;
  /** Push only: one entry per target token. */
  tokenResults?: TokenResult[];
}

/** What providers may use from the outside world; all outbound HTTP goes through `fetch` here. */
export interface ProviderContext {
  /** An outbound-safe fetch: timeout, User-Agent and the private-address guard applied. */
  fetch: typeof fetch;
  timeoutMs: number;
  /**
   * The same private-address guard for transports that do not use `fetch` (SMTP, HTTP/2 APNs): resolves
   * the target (`smtp://host:port`, `https://host`) and throws a non-retryable ProviderError when refused.
   * Absent means no guard (e.g. a test context).
   */
  assertAllowed?: (target: string | URL) => Promise<void>;
  /**
   * The connection-time half of that guard: a `lookup` for net/tls/http2 connect (or to resolve a host once and
   * connect to the answer) that refuses internal addresses with a non-retryable ProviderError, so a name that
   * resolved to a public address for `assertAllowed` cannot connect to an internal one (DNS rebinding).
   * Absent means the transport resolves the name itself.
   */
  guardedLookup?: LookupFunction;
}

export interface ChannelProvider<C extends Exclude<DeliveryChannel, 'in_app'> = Exclude<DeliveryChannel, 'in_app'>> {
  id: string;
  channel: C;
  send(credentials: Credentials, message: MessageByChannel[C], ctx: ProviderContext): Promise<SendResult>;
  /** A live check of the credentials (SMTP verify, an authenticated no-op request). Throws ProviderError. */
  check?(credentials: Credentials, ctx: ProviderContext): Promise<void>;
}

/**
 * A vendor failure. `retryable` is the provider's judgement (timeouts, 5xx, 429, connection errors are
 * retryable; 4xx are not); only worker/dispatch.ts decides whether to actually retry.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly raw?: string,
    readonly statusCode?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** How use-cases reach providers without importing vendor code: built in container.ts. */
export interface ProviderDirectory {
  /** The implementation for a provider on a channel, or undefined when Herald cannot deliver through it. */
  get(providerId: string, channel: DeliveryChannel): ChannelProvider | undefined;
  /** The outbound context (safe fetch, timeouts) for a send or a check. */
  context(options?: { timeoutMs?: number }): ProviderContext;
}
