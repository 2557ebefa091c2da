/**
 * Digest windows: which events a digest step groups together (the digest key) and when the group is sent.
 * Pure: the worker passes the current time and, for backoff, when the previous event for the same key arrived.
 */
import { CronExpressionParser } from 'cron-parser';
import { valueAtPath } from './step-filters.js';
import { addTimeUnit, isTimeUnit, toMilliseconds } from './time-units.js';
import { isValidTimezone, localParts, wallTimeToUtc } from './time-zones.js';
import type { DigestMetadata, DigestTimedConfig, TimeUnit } from './types.js';

export interface DigestWindowInput {
  nowMs: number;
  /**
   * When the most recent earlier event for the same subscriber and digest key was triggered (epoch ms), excluding
   * the event being scheduled now. Only backoff digests read it; absent means there was none.
   */
  lastEventAtMs?: number;
  /** The subscriber's IANA timezone for timed digests; UTC when absent or empty. */
  timezone?: string | null;
}

export interface DigestWindow {
  /** Epoch ms at which the digest closes and the merged events move on to the next step. */
  windowEndsAt: number;
  /** True when the event must not wait: send it now as a digest of one. */
  immediate?: boolean;
}

/**
 * The value of the digest key for an event: the value at `metadata.digestKey` (a dot path in the payload;
 * a leading `payload.` is accepted) as a string, objects as JSON, '' when there is no key or no value.
 * Events of one subscriber with equal values share a digest.
 */
export function digestKeyValue(metadata: Pick<DigestMetadata, 'digestKey'> | undefined, payload: Record<string, unknown> | undefined): string {
  const key = metadata?.digestKey?.trim();
  if (!key) return '';
  let value = valueAtPath(payload ?? {}, key);
  if (value === undefined && key.startsWith('payload.')) value = valueAtPath(payload ?? {}, key.slice('payload.'.length));
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * When the digest that an event opens (or joins) closes. Returns `{ error }` for unusable metadata, for the
 * worker to record as a Failed execution detail.
 *
 * - `regular` (without `backoff: true`): `nowMs + amount unit` (`addTimeUnit`, months on the calendar).
 * - `backoff`, or `regular` with `backoff: true`: when `lastEventAtMs` lies within `backoffAmount backoffUnit`
 *   before now (inclusive), digest for `amount unit` from now; otherwise `{ windowEndsAt: nowMs, immediate: true }`.
 * - `timed`: the first occurrence strictly after now, in `timezone` (UTC by default):
 *   - `timed.cronExpression` set: the next match of that cron expression (5 or 6 fields, cron-parser), evaluated
 *     in the timezone; other timed fields are ignored.
 *   - otherwise a day rule at `atTime` ("HH:mm" or "HH:mm:ss", local wall time, default "00:00"). A day matches
 *     when it satisfies every constraint that is set: `weekDays` (the local weekday is listed); `monthDays`
 *     (the day of month is listed, unless `monthlyType` is 'on'; days a month lacks are skipped);
 *     `monthlyType: 'on'` with `ordinal` ('1'..'5' | 'last') and `ordinalValue` (a weekday name, 'day',
 *     'weekday' = Mon-Fri, 'weekend' = Sat/Sun): e.g. the last weekday of the month. No constraint = every day.
 *     Repetition intervals ("every 2 weeks") are not modelled: the next matching day wins.
 *   - no cron, no day constraint, no `atTime`, and `amount` + `unit` in seconds/minutes/hours: now + amount.
 *   - a wall time that does not exist (DST spring-forward gap) moves forward by the gap; a wall time that
 *     exists twice (fall-back) takes the earlier instant.
 *   - `timed.untilDate` (ISO 8601): when the next occurrence is after it, the schedule has ended and the event
 *     is sent at once (`immediate: true`).
 */
export function computeDigestWindow(
  metadata: DigestMetadata,
  input: DigestWindowInput,
): DigestWindow | { error: string } {
  const { nowMs } = input;
  if (!Number.isFinite(nowMs)) return { error: 'nowMs must be a finite number' };
  if (!metadata || typeof metadata !== 'object') return { error: 'Digest step has no digest settings' };
  const isBackoff = metadata.type === 'backoff' || (metadata.type === 'regular' && metadata.backoff === true);
  if (isBackoff) return backoffWindow(metadata, input);
  if (metadata.type === 'regular') {
    const duration = readDuration(metadata.amount, metadata.unit, 'Digest');
    if ('error' in duration) return duration;
    return { windowEndsAt: addTimeUnit(nowMs, duration.amount, duration.unit) };
  }
  if (metadata.type === 'timed') return timedWindow(metadata, input);
  return { error: `Unknown digest type ${JSON.stringify(metadata.type)}` };
}

function readDuration(amount: unknown, unit: unknown, label: string): { amount: number; unit: TimeUnit } | { error: string } {
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
    return { error: `${label} amount must be a non-negative number, got ${JSON.stringify(amount)}` };
  }
  if (!isTimeUnit(unit)) return { error: `${label} unit must be a time unit, got ${JSON.stringify(unit)}` };
  return { amount, unit };
}

function backoffWindow(metadata: DigestMetadata, { nowMs, lastEventAtMs }: DigestWindowInput): DigestWindow | { error: string } {
  const digest = readDuration(metadata.amount, metadata.unit, 'Digest');
  if ('error' in digest) return digest;
  const backoff = readDuration(metadata.backoffAmount, metadata.backoffUnit, 'Digest backoff');
  if ('error' in backoff) return backoff;
  const recent =
    lastEventAtMs !== undefined &&
    lastEventAtMs <= nowMs &&
    nowMs - lastEventAtMs <= toMilliseconds(backoff.amount, backoff.unit);
  if (!recent) return { windowEndsAt: nowMs, immediate: true };
  return { windowEndsAt: addTimeUnit(nowMs, digest.amount, digest.unit) };
}

// ---- Timed digests -----------------------------------------------------------------------------------

const WEEKDAY_NAMES = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
const ORDINALS = new Set(['1', '2', '3', '4', '5', 'last']);
const ORDINAL_VALUES = new Set(['day', 'weekday', 'weekend', ...WEEKDAY_NAMES]);
/** Every sensible rule recurs within this; one that does not (Feb 29 on a Monday) is reported as an error. */
const MAX_DAYS_SCANNED = 366 * 8;
const AT_TIME = /^([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/;

function timedWindow(metadata: DigestMetadata, { nowMs, timezone }: DigestWindowInput): DigestWindow | { error: string } {
  const timed: DigestTimedConfig = metadata.timed ?? {};
  const tz = timezone && timezone.trim() !== '' ? timezone.trim() : 'UTC';
  if (!isValidTimezone(tz)) return { error: `Unknown timezone ${JSON.stringify(tz)}` };

  let untilMs: number | undefined;
  if (timed.untilDate !== undefined && timed.untilDate !== null && timed.untilDate !== '') {
    untilMs = Date.parse(timed.untilDate);
    if (Number.isNaN(untilMs)) return { error: `Digest untilDate is not an ISO 8601 date: ${JSON.stringify(timed.untilDate)}` };
  }

  const next = nextTimedOccurrence(metadata, timed, nowMs, tz);
  if (typeof next !== 'number') return next;
  if (untilMs !== undefined && next > untilMs) return { windowEndsAt: nowMs, immediate: true };
  return { windowEndsAt: next };
}

function nextTimedOccurrence(
  metadata: DigestMetadata,
  timed: DigestTimedConfig,
  nowMs: number,
  tz: string,
): number | { error: string } {
  if (timed.cronExpression && timed.cronExpression.trim() !== '') {
    try {
      const expression = CronExpressionParser.parse(timed.cronExpression.trim(), { currentDate: new Date(nowMs), tz });
      return expression.next().getTime();
    } catch (error) {
      return { error: `Invalid digest cronExpression ${JSON.stringify(timed.cronExpression)}: ${(error as Error).message}` };
    }
  }

  const weekDays = timed.weekDays ?? [];
  const monthDays = timed.monthDays ?? [];
  const usesOrdinal = timed.monthlyType === 'on';
  const hasDayRule = weekDays.length > 0 || usesOrdinal || monthDays.length > 0;
  if (!hasDayRule && !timed.atTime && metadata.unit && ['seconds', 'minutes', 'hours'].includes(metadata.unit)) {
    const duration = readDuration(metadata.amount, metadata.unit, 'Digest');
    if ('error' in duration) return duration;
    return addTimeUnit(nowMs, duration.amount, duration.unit);
  }

  const problem = timedConfigProblem(timed);
  if (problem) return { error: problem };
  const [hour, minute, second] = parseAtTime(timed.atTime ?? '00:00');

  const today = localParts(nowMs, tz);
  for (let offset = 0; offset < MAX_DAYS_SCANNED; offset++) {
    const day = new Date(Date.UTC(today.year, today.month - 1, today.day + offset));
    const [y, m, d, weekday] = [day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), day.getUTCDay()];
    if (weekDays.length > 0 && !weekDays.includes(WEEKDAY_NAMES[weekday])) continue;
    if (!usesOrdinal && monthDays.length > 0 && !monthDays.includes(d)) continue;
    if (usesOrdinal && !isOrdinalDay(y, m, d, timed.ordinal!, timed.ordinalValue!)) continue;
    const candidate = wallTimeToUtc({ year: y, month: m, day: d, hour, minute, second }, tz);
    if (candidate > nowMs) return candidate;
  }
  return { error: 'Timed digest: no matching day within 8 years' };
}

function timedConfigProblem(timed: DigestTimedConfig): string | undefined {
  if (timed.atTime !== undefined && timed.atTime !== '' && !AT_TIME.test(timed.atTime)) {
    return `Digest atTime must be HH:mm, got ${JSON.stringify(timed.atTime)}`;
  }
  for (const name of timed.weekDays ?? []) {
    if (!(WEEKDAY_NAMES as readonly string[]).includes(name)) return `Unknown digest weekDay ${JSON.stringify(name)}`;
  }
  for (const day of timed.monthDays ?? []) {
    if (!Number.isInteger(day) || day < 1 || day > 31) return `Digest monthDays must be integers 1-31, got ${JSON.stringify(day)}`;
  }
  if (timed.monthlyType === 'on') {
    if (!timed.ordinal || !ORDINALS.has(timed.ordinal)) return `Digest ordinal must be 1-5 or last, got ${JSON.stringify(timed.ordinal)}`;
    if (!timed.ordinalValue || !ORDINAL_VALUES.has(timed.ordinalValue)) {
      return `Unknown digest ordinalValue ${JSON.stringify(timed.ordinalValue)}`;
    }
  }
  return undefined;
}

function parseAtTime(atTime: string): [number, number, number] {
  const match = AT_TIME.exec(atTime === '' ? '00:00' : atTime);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : [0, 0, 0];
}

function matchesOrdinalValue(weekday: number, ordinalValue: string): boolean {
  if (ordinalValue === 'day') return true;
  if (ordinalValue === 'weekday') return weekday >= 1 && weekday <= 5;
  if (ordinalValue === 'weekend') return weekday === 0 || weekday === 6;
  return WEEKDAY_NAMES[weekday] === ordinalValue;
}

/** Whether (y, m, d) is the `ordinal`-th day of its month matching `ordinalValue` ("the 2nd tuesday"). */
function isOrdinalDay(year: number, month: number, day: number, ordinal: string, ordinalValue: string): boolean {
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const matching: number[] = [];
  for (let d = 1; d <= daysInMonth; d++) {
    if (matchesOrdinalValue(new Date(Date.UTC(year, month - 1, d)).getUTCDay(), ordinalValue)) matching.push(d);
  }
  const target = ordinal === 'last' ? matching[matching.length - 1] : matching[Number(ordinal) - 1];
  return target === day;
}

/** Kept here for existing importers; it lives in time-zones.ts. */
export { isValidTimezone } from './time-zones.js';
