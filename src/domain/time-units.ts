/** Time-unit arithmetic for delay, digest and throttle steps. All values are epoch milliseconds (UTC). */
import { TIME_UNITS, type TimeUnit } from './types.js';

const MS_PER_UNIT: Record<TimeUnit, number> = {
  seconds: 1_000,
  minutes: 60_000,
  hours: 3_600_000,
  days: 86_400_000,
  weeks: 604_800_000,
  // A fixed 30 days: durations (throttle windows, backoff) need a length, not a calendar position.
  months: 2_592_000_000,
};

export function isTimeUnit(value: unknown): value is TimeUnit {
  return typeof value === 'string' && (TIME_UNITS as readonly string[]).includes(value);
}

/**
 * A duration in milliseconds. Days and weeks are exact multiples of 24 hours; a month is 30 days.
 * Use `addTimeUnit` when the result is a point on the calendar.
 */
export function toMilliseconds(amount: number, unit: TimeUnit): number {
  if (!Number.isFinite(amount)) throw new RangeError(`amount must be a finite number, got ${amount}`);
  if (!isTimeUnit(unit)) throw new RangeError(`unit must be one of ${TIME_UNITS.join(', ')}, got ${String(unit)}`);
  return amount * MS_PER_UNIT[unit];
}

/**
 * `fromMs` moved by `amount` units. Seconds to weeks are fixed lengths (UTC, so no DST shifts). Months are calendar
 * months in UTC, clamped to the target month's last day (Jan 31 + 1 month = Feb 28/29, time of day kept);
 * a fractional month amount is rounded toward zero for the calendar part and the rest added as 30-day months.
 */
export function addTimeUnit(fromMs: number, amount: number, unit: TimeUnit): number {
  if (!Number.isFinite(fromMs)) throw new RangeError(`fromMs must be a finite number, got ${fromMs}`);
  if (unit !== 'months') return fromMs + toMilliseconds(amount, unit);
  if (!Number.isFinite(amount)) throw new RangeError(`amount must be a finite number, got ${amount}`);
  const wholeMonths = Math.trunc(amount);
  const from = new Date(fromMs);
  const targetMonthIndex = from.getUTCMonth() + wholeMonths;
  const targetYear = from.getUTCFullYear() + Math.floor(targetMonthIndex / 12);
  const targetMonth = ((targetMonthIndex % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  const day = Math.min(from.getUTCDate(), lastDay);
  const moved = Date.UTC(
    targetYear, targetMonth, day,
    from.getUTCHours(), from.getUTCMinutes(), from.getUTCSeconds(), from.getUTCMilliseconds(),
  );
  return moved + toMilliseconds(amount - wholeMonths, 'months');
}
