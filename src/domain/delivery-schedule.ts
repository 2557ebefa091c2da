/**
 * A subscriber's delivery schedule (quiet hours), in Novu's shape: `{ isEnabled, weeklySchedule: { monday:
 * { isEnabled, hours: [{ start: "09:00 AM", end: "05:00 PM" }] }, ... } }`, read on the subscriber's wall clock.
 * Pure: callers pass the instant and the time zone.
 *
 * Rules (Novu leaves them implicit):
 * - a disabled schedule, or none, is always open;
 * - an enabled schedule is open on the days listed with `isEnabled: true`; a day that is missing or disabled is
 *   closed all day; an enabled day without `hours` (or with an empty list) is open all day;
 * - a range is `[start, end)` on that day; `end` must be after `start` (a night window is two ranges on two days),
 *   and an end of `11:59 PM` runs to midnight.
 */
import { isValidTimezone, localParts, wallTimeToUtc } from './time-zones.js';

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface ScheduleTimeRange {
  start: string;
  end: string;
}

export interface DaySchedule {
  isEnabled: boolean;
  hours?: ScheduleTimeRange[];
}

export interface DeliverySchedule {
  isEnabled: boolean;
  weeklySchedule?: Partial<Record<Weekday, DaySchedule>>;
  /**
   * Herald's addition: the zone the schedule is read in. When absent, the subscriber's `timezone`, else UTC.
   */
  timezone?: string;
}

const TIME_PATTERN = /^(0?[1-9]|1[0-2]):([0-5][0-9]) ?(AM|PM)$/i;
const MINUTES_PER_DAY = 24 * 60;

/** Minutes after midnight of "09:30 AM" / "9:30 pm"; undefined when it is not a 12-hour clock time. */
export function parseClockTime(text: string): number | undefined {
  const match = TIME_PATTERN.exec(text.trim());
  if (!match) return undefined;
  const hour = Number(match[1]) % 12 + (match[3].toUpperCase() === 'PM' ? 12 : 0);
  return hour * 60 + Number(match[2]);
}

/** Every problem of a schedule, each naming its field under `path` (e.g. "schedule.weeklySchedule.monday.hours[0].end"). */
export function scheduleProblems(schedule: unknown, path = 'schedule'): string[] {
  if (!isObject(schedule)) return [`${path} must be an object`];
  const problems: string[] = [];
  for (const key of Object.keys(schedule)) {
    if (!['isEnabled', 'weeklySchedule', 'timezone'].includes(key)) problems.push(`${path}.${key} is not a schedule field`);
  }
  if (typeof schedule.isEnabled !== 'boolean') problems.push(`${path}.isEnabled must be a boolean`);
  if (schedule.timezone !== undefined && (typeof schedule.timezone !== 'string' || !isValidTimezone(schedule.timezone))) {
    problems.push(`${path}.timezone must be a valid IANA time zone`);
  }
  const weekly = schedule.weeklySchedule;
  if (weekly === undefined) return problems;
  if (!isObject(weekly)) return [...problems, `${path}.weeklySchedule must be an object`];
  for (const [day, value] of Object.entries(weekly)) {
    const dayPath = `${path}.weeklySchedule.${day}`;
    if (!(WEEKDAYS as readonly string[]).includes(day)) {
      problems.push(`${dayPath} is not a day of the week (monday … sunday)`);
      continue;
    }
    if (!isObject(value)) {
      problems.push(`${dayPath} must be an object`);
      continue;
    }
    for (const key of Object.keys(value)) {
      if (key !== 'isEnabled' && key !== 'hours') problems.push(`${dayPath}.${key} is not a day schedule field`);
    }
    if (typeof value.isEnabled !== 'boolean') problems.push(`${dayPath}.isEnabled must be a boolean`);
    if (value.hours === undefined) continue;
    if (!Array.isArray(value.hours)) {
      problems.push(`${dayPath}.hours must be an array`);
      continue;
    }
    value.hours.forEach((range: unknown, index: number) => problems.push(...rangeProblems(range, `${dayPath}.hours[${index}]`)));
  }
  return problems;
}

function rangeProblems(range: unknown, path: string): string[] {
  if (!isObject(range)) return [`${path} must be an object with start and end`];
  const problems: string[] = [];
  for (const key of Object.keys(range)) {
    if (key !== 'start' && key !== 'end') problems.push(`${path}.${key} is not a time range field`);
  }
  const start = typeof range.start === 'string' ? parseClockTime(range.start) : undefined;
  const end = typeof range.end === 'string' ? parseClockTime(range.end) : undefined;
  if (start === undefined) problems.push(`${path}.start must be a time like "09:00 AM"`);
  if (end === undefined) problems.push(`${path}.end must be a time like "05:00 PM"`);
  if (start !== undefined && end !== undefined && end <= start) problems.push(`${path}.end must be after ${path}.start`);
  return problems;
}

/** Open ranges of one weekday in minutes after midnight, `[start, end)`, sorted. */
function rangesOf(schedule: DeliverySchedule, day: Weekday): Array<[number, number]> {
  const daySchedule = schedule.weeklySchedule?.[day];
  if (!daySchedule?.isEnabled) return [];
  if (!daySchedule.hours?.length) return [[0, MINUTES_PER_DAY]];
  return daySchedule.hours
    .map((range): [number, number] => {
      const start = parseClockTime(range.start) ?? 0;
      const end = parseClockTime(range.end) ?? MINUTES_PER_DAY;
      return [start, end === MINUTES_PER_DAY - 1 ? MINUTES_PER_DAY : end];
    })
    .sort((a, b) => a[0] - b[0]);
}

/** The zone a schedule is read in: its own, else the subscriber's, else UTC (an unknown zone also reads as UTC). */
export function scheduleTimezone(schedule: DeliverySchedule, subscriberTimezone?: string | null): string {
  for (const zone of [schedule.timezone, subscriberTimezone]) if (zone && isValidTimezone(zone)) return zone;
  return 'UTC';
}

export type ScheduleCheck = { open: true } | { open: false; opensAt: number | undefined };

/**
 * Whether `nowMs` falls in the schedule's window on the wall clock of `timezone`; when not, the instant the window
 * next opens (undefined when no day is open at all). Wall times skipped by a DST change open at the instant after
 * the gap; repeated ones open at their first occurrence.
 */
export function checkSchedule(schedule: DeliverySchedule | undefined, nowMs: number, timezone: string): ScheduleCheck {
  if (!schedule?.isEnabled) return { open: true };
  const today = localParts(nowMs, timezone);
  // Day 0 is today on the subscriber's calendar; 7 days on covers the same weekday a week later.
  for (let offset = 0; offset <= 7; offset++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + offset));
    const day = WEEKDAYS[(date.getUTCDay() + 6) % 7];
    for (const [start, end] of rangesOf(schedule, day)) {
      const at = (minutes: number) => {
        const dayStart = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour: 0, minute: 0, second: 0 };
        if (minutes >= MINUTES_PER_DAY) {
          const next = new Date(Date.UTC(dayStart.year, dayStart.month - 1, dayStart.day + 1));
          return wallTimeToUtc({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour: 0, minute: 0, second: 0 }, timezone);
        }
        return wallTimeToUtc({ ...dayStart, hour: Math.floor(minutes / 60), minute: minutes % 60 }, timezone);
      };
      const opensAt = at(start);
      const closesAt = at(end);
      if (nowMs < closesAt && nowMs >= opensAt) return { open: true };
      if (opensAt > nowMs) return { open: false, opensAt };
    }
  }
  return { open: false, opensAt: undefined };
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
