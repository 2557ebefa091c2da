import { createHmac } from 'node:crypto';
import { providerErrorFromStatus, toProviderError } from './outbound.js';
import type { ProviderContext } from './ports.js';

/** A vendor's answer, read completely: the status, the headers and the body text. */
export interface VendorAnswer {
  status: number;
  headers: Headers;
  text: string;
}

function describe(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/**
 * Sends one request through the context's fetch and reads the whole answer. Network failures and
 * timeouts become ProviderErrors; a non-2xx status does too unless `acceptStatus` accepts it
 * (push providers read per-token failures out of 4xx answers).
 */
export async function callVendor(
  ctx: ProviderContext,
  vendor: string,
  url: string,
  init: RequestInit,
  acceptStatus: (status: number) => boolean = (status) => status >= 200 && status < 300,
): Promise<VendorAnswer> {
  let answer: VendorAnswer;
  try {
    const response = await ctx.fetch(url, init);
    answer = { status: response.status, headers: response.headers, text: await response.text() };
  } catch (error) {
    throw toProviderError(error, describe(url), ctx.timeoutMs);
  }
  if (!acceptStatus(answer.status)) throw providerErrorFromStatus(answer.status, answer.text, vendor);
  return answer;
}

/** The body as JSON, or undefined when it is not JSON (some vendors answer plain text). */
export function parseJson<T = Record<string, unknown>>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export function jsonHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { 'content-type': 'application/json', accept: 'application/json', ...extra };
}

/** Hex HMAC-SHA256 of the exact body bytes sent, so a receiver can verify before parsing. */
export function hmacSha256Hex(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** The header the generic webhook providers sign their body with (the name Novu's webhooks use). */
export const WEBHOOK_SIGNATURE_HEADER = 'x-novu-signature';

/** Reads `a.b.0.c` out of a JSON answer. */
export function valueAtPath(value: unknown, path: string): unknown {
  return path.split('.').filter(Boolean).reduce<unknown>((current, key) => {
    if (current === null || typeof current !== 'object') return undefined;
    return (current as Record<string, unknown>)[key];
  }, value);
}
