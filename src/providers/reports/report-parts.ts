import { createHash, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError, ValidationError } from '../../domain/errors.js';
import type { ProviderReport } from '../../domain/delivery-reports.js';

/** Helpers the vendor readers share: reading the body, comparing secrets, naming events. */

export function headerOf(headers: Record<string, string | undefined>, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return value === undefined || value === '' ? undefined : value;
}

/** The body as JSON; a body that is not is the sender's mistake (400), never a 500. */
export function jsonBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new ValidationError(['body is not valid JSON']);
  }
}

export function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function text(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** Constant-time comparison of two strings (different lengths are simply unequal). */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

export function rejectSignature(vendor: string, why: string): never {
  throw new UnauthorizedError(`${vendor} report rejected: ${why}`);
}

/** Unix seconds (a number or numeric text, fractions allowed) or an ISO string, as ISO 8601; undefined when unreadable. */
export function isoOf(value: unknown): string | undefined {
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value))) {
    const ms = Number(value) * 1000;
    return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
  }
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
  }
  return undefined;
}

/** An event id for vendors that give none: the same event body redelivered gets the same id. */
export function contentEventId(raw: string): string {
  return `sha256:${createHash('sha256').update(raw).digest('hex')}`;
}

export function uniqueIds(...ids: Array<string | undefined>): string[] {
  return [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];
}

/** Drops fields left undefined, so a report carries only what the vendor said. */
export function report(fields: ProviderReport): ProviderReport {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as unknown as ProviderReport;
}
