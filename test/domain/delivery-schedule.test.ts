import { describe, expect, it } from 'vitest';
import { checkSchedule, parseClockTime, scheduleProblems, scheduleTimezone, type DeliverySchedule } from '../../src/domain/delivery-schedule.js';

const at = (iso: string) => Date.parse(iso);
const opensAt = (schedule: DeliverySchedule, nowIso: string, tz = 'UTC') => {
  const check = checkSchedule(schedule, at(nowIso), tz);
  return check.open ? 'open' : check.opensAt === undefined ? 'never' : new Date(check.opensAt).toISOString();
};
const nineToFive = { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] };
const workdays: DeliverySchedule = {
  isEnabled: true,
  weeklySchedule: { monday: nineToFive, tuesday: nineToFive, wednesday: nineToFive, thursday: nineToFive, friday: nineToFive },
};

// 2026-01-05 is a Monday.
describe('checkSchedule across days', () => {
  it('open inside the hours, held until 09:00 before them, until the next day after them', () => {
    expect(opensAt(workdays, '2026-01-05T10:00:00.000Z')).toBe('open');
    expect(opensAt(workdays, '2026-01-05T09:00:00.000Z')).toBe('open');
    expect(opensAt(workdays, '2026-01-05T08:59:59.000Z')).toBe('2026-01-05T09:00:00.000Z');
    expect(opensAt(workdays, '2026-01-05T17:00:00.000Z')).toBe('2026-01-06T09:00:00.000Z');
  });

  it('a weekend (days missing or disabled) is skipped to Monday', () => {
    expect(opensAt(workdays, '2026-01-09T18:00:00.000Z')).toBe('2026-01-12T09:00:00.000Z');
    const saturdayOff = { ...workdays, weeklySchedule: { ...workdays.weeklySchedule, saturday: { isEnabled: false, hours: [{ start: '09:00 AM', end: '05:00 PM' }] } } };
    expect(opensAt(saturdayOff, '2026-01-10T10:00:00.000Z')).toBe('2026-01-12T09:00:00.000Z');
  });

  it('several ranges a day: the gap between them is closed', () => {
    const split: DeliverySchedule = { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '02:00 PM', end: '04:00 PM' }, { start: '08:00 AM', end: '12:00 PM' }] } } };
    expect(opensAt(split, '2026-01-05T12:30:00.000Z')).toBe('2026-01-05T14:00:00.000Z');
    expect(opensAt(split, '2026-01-05T07:00:00.000Z')).toBe('2026-01-05T08:00:00.000Z');
    expect(opensAt(split, '2026-01-05T15:59:00.000Z')).toBe('open');
  });

  it('the only open day, already past this week, opens a week later', () => {
    const mondayMorning: DeliverySchedule = { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '08:00 AM', end: '09:00 AM' }] } } };
    expect(opensAt(mondayMorning, '2026-01-05T10:00:00.000Z')).toBe('2026-01-12T08:00:00.000Z');
  });

  it('an enabled day without hours is open all day; a disabled schedule is always open; no open day is never', () => {
    expect(opensAt({ isEnabled: true, weeklySchedule: { tuesday: { isEnabled: true } } }, '2026-01-05T23:00:00.000Z')).toBe('2026-01-06T00:00:00.000Z');
    expect(opensAt({ isEnabled: true, weeklySchedule: { tuesday: { isEnabled: true, hours: [] } } }, '2026-01-06T23:59:59.000Z')).toBe('open');
    expect(opensAt({ ...workdays, isEnabled: false }, '2026-01-10T03:00:00.000Z')).toBe('open');
    expect(checkSchedule(undefined, at('2026-01-10T03:00:00.000Z'), 'UTC')).toEqual({ open: true });
    expect(opensAt({ isEnabled: true, weeklySchedule: { monday: { isEnabled: false } } }, '2026-01-05T10:00:00.000Z')).toBe('never');
    expect(opensAt({ isEnabled: true }, '2026-01-05T10:00:00.000Z')).toBe('never');
  });
});

describe('checkSchedule across midnight', () => {
  const night: DeliverySchedule = {
    isEnabled: true,
    weeklySchedule: {
      monday: { isEnabled: true, hours: [{ start: '10:00 PM', end: '11:59 PM' }] },
      tuesday: { isEnabled: true, hours: [{ start: '12:00 AM', end: '06:00 AM' }] },
    },
  };

  it('a night window is two ranges; 11:59 PM runs to midnight, so the window has no gap', () => {
    expect(opensAt(night, '2026-01-05T21:59:00.000Z')).toBe('2026-01-05T22:00:00.000Z');
    expect(opensAt(night, '2026-01-05T23:59:30.000Z')).toBe('open');
    expect(opensAt(night, '2026-01-06T00:00:00.000Z')).toBe('open');
    expect(opensAt(night, '2026-01-06T05:59:59.000Z')).toBe('open');
    expect(opensAt(night, '2026-01-06T06:00:00.000Z')).toBe('2026-01-12T22:00:00.000Z');
  });

  it('midnight in the subscriber zone, not in UTC', () => {
    // 2026-01-05T21:30Z is Tuesday 06:30 in Tokyo (UTC+9): past the Tuesday range, so Monday 22:00 Tokyo next week.
    expect(opensAt(night, '2026-01-05T21:30:00.000Z', 'Asia/Tokyo')).toBe('2026-01-12T13:00:00.000Z');
    // 2026-01-05T14:00Z is Monday 23:00 in Tokyo: open.
    expect(opensAt(night, '2026-01-05T14:00:00.000Z', 'Asia/Tokyo')).toBe('open');
  });
});

describe('checkSchedule in time zones', () => {
  it('reads the hours on the subscriber wall clock', () => {
    // 13:00Z is 08:00 in New York (UTC-5 in January): opens at 09:00 New York = 14:00Z.
    expect(opensAt(workdays, '2026-01-05T13:00:00.000Z', 'America/New_York')).toBe('2026-01-05T14:00:00.000Z');
    // 03:00Z Monday is still Sunday 22:00 in New York.
    expect(opensAt(workdays, '2026-01-05T03:00:00.000Z', 'America/New_York')).toBe('2026-01-05T14:00:00.000Z');
    // 10:00Z Monday is 19:00 in Tokyo: next Tuesday 09:00 Tokyo = Tuesday 00:00Z.
    expect(opensAt(workdays, '2026-01-05T10:00:00.000Z', 'Asia/Tokyo')).toBe('2026-01-06T00:00:00.000Z');
    // Half-hour zones: 09:00 in Kolkata (UTC+5:30) is 03:30Z.
    expect(opensAt(workdays, '2026-01-05T02:00:00.000Z', 'Asia/Kolkata')).toBe('2026-01-05T03:30:00.000Z');
  });

  it('the zone: the schedule own, else the subscriber, else UTC', () => {
    expect(scheduleTimezone({ isEnabled: true, timezone: 'Asia/Tokyo' }, 'Europe/Berlin')).toBe('Asia/Tokyo');
    expect(scheduleTimezone({ isEnabled: true }, 'Europe/Berlin')).toBe('Europe/Berlin');
    expect(scheduleTimezone({ isEnabled: true }, null)).toBe('UTC');
    expect(scheduleTimezone({ isEnabled: true }, 'Not/AZone')).toBe('UTC');
  });
});

describe('checkSchedule across DST changes', () => {
  it('a window after a spring-forward weekend opens at the new offset (Berlin: CET → CEST)', () => {
    // Friday 2026-03-27 18:00 CET; Monday 09:00 CEST is 07:00Z (it was 08:00Z the week before).
    expect(opensAt(workdays, '2026-03-27T17:00:00.000Z', 'Europe/Berlin')).toBe('2026-03-30T07:00:00.000Z');
    expect(opensAt(workdays, '2026-03-20T17:00:00.000Z', 'Europe/Berlin')).toBe('2026-03-23T08:00:00.000Z');
  });

  it('a start inside the spring-forward gap opens right after the gap', () => {
    // 2026-03-29 in Berlin: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist, so the window opens at 03:30 CEST.
    const gap: DeliverySchedule = { isEnabled: true, weeklySchedule: { sunday: { isEnabled: true, hours: [{ start: '02:30 AM', end: '04:00 AM' }] } } };
    expect(opensAt(gap, '2026-03-29T00:00:00.000Z', 'Europe/Berlin')).toBe('2026-03-29T01:30:00.000Z');
    expect(opensAt(gap, '2026-03-29T01:45:00.000Z', 'Europe/Berlin')).toBe('open');
    expect(opensAt(gap, '2026-03-29T02:00:00.000Z', 'Europe/Berlin')).toBe('2026-04-05T00:30:00.000Z');
  });

  it('a start inside the fall-back overlap opens at its first occurrence', () => {
    // 2026-10-25 in Berlin: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice, first at 00:30Z.
    const overlap: DeliverySchedule = { isEnabled: true, weeklySchedule: { sunday: { isEnabled: true, hours: [{ start: '02:30 AM', end: '05:00 AM' }] } } };
    expect(opensAt(overlap, '2026-10-25T00:00:00.000Z', 'Europe/Berlin')).toBe('2026-10-25T00:30:00.000Z');
    // The window 02:30 CEST – 05:00 CET lasts 3.5 hours: still open at 03:45Z (04:45 CET).
    expect(opensAt(overlap, '2026-10-25T03:45:00.000Z', 'Europe/Berlin')).toBe('open');
    expect(opensAt(overlap, '2026-10-25T04:00:00.000Z', 'Europe/Berlin')).toBe('2026-11-01T01:30:00.000Z');
  });

  it('New York spring forward (2026-03-08): Monday 09:00 EDT is 13:00Z', () => {
    expect(opensAt(workdays, '2026-03-06T23:00:00.000Z', 'America/New_York')).toBe('2026-03-09T13:00:00.000Z');
  });
});

describe('schedule validation', () => {
  it('parses 12-hour clock times', () => {
    expect(parseClockTime('09:00 AM')).toBe(540);
    expect(parseClockTime('12:00 AM')).toBe(0);
    expect(parseClockTime('12:30 PM')).toBe(750);
    expect(parseClockTime('11:59 pm')).toBe(1439);
    for (const bad of ['25:00 PM', '13:00 PM', '00:30 AM', '9:60 AM', '09:00', 'noon']) expect(parseClockTime(bad), bad).toBeUndefined();
  });

  it('a valid schedule has no problems', () => {
    expect(scheduleProblems(workdays)).toEqual([]);
    expect(scheduleProblems({ isEnabled: false })).toEqual([]);
    expect(scheduleProblems({ isEnabled: true, timezone: 'Europe/Berlin', weeklySchedule: { sunday: { isEnabled: true } } })).toEqual([]);
  });

  it('names every bad field', () => {
    expect(scheduleProblems({ isEnabled: true, weeklySchedule: { funday: { isEnabled: true } } })).toEqual([
      'schedule.weeklySchedule.funday is not a day of the week (monday … sunday)',
    ]);
    expect(scheduleProblems({ isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '25:00 PM', end: '05:00 PM' }] } } })).toEqual([
      'schedule.weeklySchedule.monday.hours[0].start must be a time like "09:00 AM"',
    ]);
    expect(scheduleProblems({ isEnabled: true, weeklySchedule: { friday: { isEnabled: true, hours: [{ start: '05:00 PM', end: '09:00 AM' }] } } })).toEqual([
      'schedule.weeklySchedule.friday.hours[0].end must be after schedule.weeklySchedule.friday.hours[0].start',
    ]);
    expect(scheduleProblems({ isEnabled: true, timezone: 'Mars/Olympus' })).toEqual(['schedule.timezone must be a valid IANA time zone']);
    expect(scheduleProblems({ weeklySchedule: { monday: { hours: 'all' } } })).toEqual([
      'schedule.isEnabled must be a boolean',
      'schedule.weeklySchedule.monday.isEnabled must be a boolean',
      'schedule.weeklySchedule.monday.hours must be an array',
    ]);
    expect(scheduleProblems('always')).toEqual(['schedule must be an object']);
  });
});
