/** When a delay step's job runs. Pure: the worker passes the current time. */
import { valueAtPath } from './step-filters.js';
import { addTimeUnit, isTimeUnit } from './time-units.js';
import { TIME_UNITS } from './types.js';

/**
 * A delay step's metadata, as stored on the step (loosely typed: it comes from user input and is checked here).
 * - `regular`: wait `amount` `unit`s from now.
 * - `scheduled`: run at the ISO 8601 date found at `delayPath` in the payload (`sendAt` or `payload.sendAt`).
 */
export interface DelayMetadata {
  type?: 'regular' | 'scheduled' | string;
  amount?: number;
  unit?: string;
  delayPath?: string;
}

export type DelayDecision = { runAt: number } | { error: string };

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * The epoch ms at which the step after the delay should run, or an error text for the execution detail.
 * A scheduled date in the past (or now) runs now. A date-only value (`2026-05-01`) means midnight UTC; a date-time
 * without an offset is read as UTC too, so the result never depends on the server's timezone.
 */
export function computeDelayUntil(
  metadata: DelayMetadata | undefined,
  payload: Record<string, unknown> | undefined,
  nowMs: number,
): DelayDecision {
  const type = metadata?.type ?? 'regular';
  if (type === 'regular') {
    const { amount, unit } = metadata ?? {};
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
      return { error: `Delay amount must be a non-negative number, got ${JSON.stringify(amount)}` };
    }
    if (!isTimeUnit(unit)) {
      return { error: `Delay unit must be one of ${TIME_UNITS.join(', ')}, got ${JSON.stringify(unit)}` };
    }
    return { runAt: addTimeUnit(nowMs, amount, unit) };
  }
  if (type === 'scheduled') {
    const path = metadata?.delayPath;
    if (typeof path !== 'string' || path.trim() === '') return { error: 'Scheduled delay has no delayPath' };
    const raw = payloadValue(payload ?? {}, path.trim());
    if (raw === undefined || raw === null) return { error: `Scheduled delay: payload.${stripPayloadPrefix(path)} is missing` };
    const at = parseIsoUtc(raw);
    if (at === undefined) {
      return { error: `Scheduled delay: payload.${stripPayloadPrefix(path)} is not an ISO 8601 date: ${JSON.stringify(raw)}` };
    }
    return { runAt: Math.max(at, nowMs) };
  }
  return { error: `Unknown delay type ${JSON.stringify(type)}` };
}

function stripPayloadPrefix(path: string): string {
  return path.startsWith('payload.') ? path.slice('payload.'.length) : path;
}

function payloadValue(payload: Record<string, unknown>, path: string): unknown {
  const direct = valueAtPath(payload, path);
  return direct !== undefined ? direct : valueAtPath(payload, stripPayloadPrefix(path));
}

function parseIsoUtc(raw: unknown): number | undefined {
  if (typeof raw !== 'string' || !ISO_DATE_TIME.test(raw.trim())) return undefined;
  const text = raw.trim().replace(' ', 'T');
  const hasOffset = /(?:Z|[+-]\d{2}:?\d{2})$/.test(text) && text.includes('T');
  const normalised = hasOffset || !text.includes('T') ? text : `${text}Z`;
  const parsed = Date.parse(normalised);
  return Number.isNaN(parsed) ? undefined : parsed;
}
