import { describe, expect, it } from 'vitest';
import { computeDigestWindow, digestKeyValue, isValidTimezone } from '../../src/domain/digest-window.js';
import type { DigestMetadata, DigestTimedConfig } from '../../src/domain/types.js';

const at = (iso: string) => Date.parse(iso);
// Friday 1 May 2026, 12:00 UTC
const now = at('2026-05-01T12:00:00.000Z');

function timed(config: DigestTimedConfig, extra: Partial<DigestMetadata> = {}): DigestMetadata {
  return { type: 'timed', timed: config, ...extra };
}
function endsAt(metadata: DigestMetadata, nowMs = now, timezone?: string): number {
  const result = computeDigestWindow(metadata, { nowMs, timezone });
  if ('error' in result) throw new Error(result.error);
  expect(result.immediate).toBeUndefined();
  return result.windowEndsAt;
}

describe('digestKeyValue', () => {
  const payload = { orderId: 'o-1', count: 3, nested: { id: 'n-1' }, obj: { a: 1 }, nothing: null };
  it('reads the digest key path from the payload', () => {
    expect(digestKeyValue({ digestKey: 'orderId' }, payload)).toBe('o-1');
    expect(digestKeyValue({ digestKey: 'nested.id' }, payload)).toBe('n-1');
    expect(digestKeyValue({ digestKey: 'payload.nested.id' }, payload)).toBe('n-1');
    expect(digestKeyValue({ digestKey: 'count' }, payload)).toBe('3');
    expect(digestKeyValue({ digestKey: 'obj' }, payload)).toBe('{"a":1}');
  });
  it("is '' without a key or a value", () => {
    expect(digestKeyValue({}, payload)).toBe('');
    expect(digestKeyValue(undefined, payload)).toBe('');
    expect(digestKeyValue({ digestKey: '  ' }, payload)).toBe('');
    expect(digestKeyValue({ digestKey: 'missing' }, payload)).toBe('');
    expect(digestKeyValue({ digestKey: 'nothing' }, payload)).toBe('');
    expect(digestKeyValue({ digestKey: 'orderId' }, undefined)).toBe('');
  });
});

describe('computeDigestWindow: regular', () => {
  it('closes amount units after now', () => {
    expect(endsAt({ type: 'regular', amount: 5, unit: 'minutes' })).toBe(now + 300_000);
    expect(endsAt({ type: 'regular', amount: 1, unit: 'days', digestKey: 'x' })).toBe(now + 86_400_000);
  });
  it('reports a missing amount or unit', () => {
    expect(computeDigestWindow({ type: 'regular', unit: 'minutes' }, { nowMs: now })).toEqual({
      error: 'Digest amount must be a non-negative number, got undefined',
    });
    expect(computeDigestWindow({ type: 'regular', amount: 1 }, { nowMs: now })).toHaveProperty('error');
  });
  it('reports missing metadata', () => {
    expect(computeDigestWindow(undefined as unknown as DigestMetadata, { nowMs: now })).toEqual({
      error: 'Digest step has no digest settings',
    });
  });
  it('reports an unknown type', () => {
    expect(computeDigestWindow({ type: 'weekly' } as unknown as DigestMetadata, { nowMs: now })).toEqual({
      error: 'Unknown digest type "weekly"',
    });
  });
});

describe('computeDigestWindow: backoff', () => {
  const backoff: DigestMetadata = { type: 'backoff', amount: 10, unit: 'minutes', backoffAmount: 1, backoffUnit: 'minutes' };

  it('sends at once when no event for the key arrived within the backoff window', () => {
    expect(computeDigestWindow(backoff, { nowMs: now })).toEqual({ windowEndsAt: now, immediate: true });
    expect(computeDigestWindow(backoff, { nowMs: now, lastEventAtMs: now - 60_001 })).toEqual({ windowEndsAt: now, immediate: true });
  });

  it('digests for amount when an event arrived within the backoff window (inclusive)', () => {
    expect(computeDigestWindow(backoff, { nowMs: now, lastEventAtMs: now - 30_000 })).toEqual({ windowEndsAt: now + 600_000 });
    expect(computeDigestWindow(backoff, { nowMs: now, lastEventAtMs: now - 60_000 })).toEqual({ windowEndsAt: now + 600_000 });
  });

  it('ignores a "last event" from the future', () => {
    expect(computeDigestWindow(backoff, { nowMs: now, lastEventAtMs: now + 1 })).toEqual({ windowEndsAt: now, immediate: true });
  });

  it('treats regular with backoff: true as backoff', () => {
    const regular: DigestMetadata = { ...backoff, type: 'regular', backoff: true };
    expect(computeDigestWindow(regular, { nowMs: now })).toEqual({ windowEndsAt: now, immediate: true });
    expect(computeDigestWindow(regular, { nowMs: now, lastEventAtMs: now - 1_000 })).toEqual({ windowEndsAt: now + 600_000 });
  });

  it('reports missing backoff settings', () => {
    expect(computeDigestWindow({ type: 'backoff', amount: 1, unit: 'minutes' }, { nowMs: now })).toEqual({
      error: 'Digest backoff amount must be a non-negative number, got undefined',
    });
  });
});

describe('computeDigestWindow: timed at a time of day', () => {
  it('picks today when atTime is still ahead, else tomorrow (strictly after now)', () => {
    expect(endsAt(timed({ atTime: '13:30' }))).toBe(at('2026-05-01T13:30:00Z'));
    expect(endsAt(timed({ atTime: '09:00' }))).toBe(at('2026-05-02T09:00:00Z'));
    expect(endsAt(timed({ atTime: '12:00' }))).toBe(at('2026-05-02T12:00:00Z'));
    expect(endsAt(timed({ atTime: '12:00:30' }))).toBe(at('2026-05-01T12:00:30Z'));
    expect(endsAt(timed({}))).toBe(at('2026-05-02T00:00:00Z'));
  });

  it("uses the subscriber's timezone", () => {
    // 12:00Z is 08:00 in New York (EDT) and 21:00 in Tokyo
    expect(endsAt(timed({ atTime: '09:00' }), now, 'America/New_York')).toBe(at('2026-05-01T13:00:00Z'));
    expect(endsAt(timed({ atTime: '09:00' }), now, 'Asia/Tokyo')).toBe(at('2026-05-02T00:00:00Z'));
    expect(endsAt(timed({ atTime: '09:00' }), now, 'Asia/Kolkata')).toBe(at('2026-05-02T03:30:00Z'));
    expect(endsAt(timed({ atTime: '09:00' }), now, '')).toBe(at('2026-05-02T09:00:00Z'));
  });

  it('moves a wall time inside a DST gap forward, and takes the earlier of a repeated one', () => {
    expect(endsAt(timed({ atTime: '02:30' }), at('2026-03-07T12:00:00Z'), 'America/New_York')).toBe(at('2026-03-08T07:30:00Z'));
    expect(endsAt(timed({ atTime: '01:30' }), at('2026-10-31T12:00:00Z'), 'America/New_York')).toBe(at('2026-11-01T05:30:00Z'));
    expect(endsAt(timed({ atTime: '02:30' }), at('2026-03-28T12:00:00Z'), 'Europe/Berlin')).toBe(at('2026-03-29T01:30:00Z'));
    expect(endsAt(timed({ atTime: '02:30' }), at('2026-10-24T12:00:00Z'), 'Europe/Berlin')).toBe(at('2026-10-25T00:30:00Z'));
  });

  it('without any day rule or atTime, a timed digest in minutes waits amount', () => {
    expect(endsAt(timed({}, { amount: 15, unit: 'minutes' }))).toBe(now + 900_000);
  });
});

describe('computeDigestWindow: timed on days', () => {
  it('weekDays', () => {
    expect(endsAt(timed({ atTime: '10:00', weekDays: ['monday'] }))).toBe(at('2026-05-04T10:00:00Z'));
    expect(endsAt(timed({ atTime: '13:00', weekDays: ['friday'] }))).toBe(at('2026-05-01T13:00:00Z'));
    expect(endsAt(timed({ atTime: '11:00', weekDays: ['friday'] }))).toBe(at('2026-05-08T11:00:00Z'));
    expect(endsAt(timed({ atTime: '11:00', weekDays: ['friday', 'saturday'] }))).toBe(at('2026-05-02T11:00:00Z'));
  });

  it('weekDays are local weekdays', () => {
    // Fri 22:00 in New York is already Saturday 02:00 UTC
    expect(endsAt(timed({ atTime: '22:00', weekDays: ['friday'] }), now, 'America/New_York')).toBe(at('2026-05-02T02:00:00Z'));
  });

  it('monthDays, skipping months that lack the day', () => {
    expect(endsAt(timed({ atTime: '08:00', monthDays: [1, 15] }))).toBe(at('2026-05-15T08:00:00Z'));
    expect(endsAt(timed({ atTime: '08:00', monthDays: [31], monthlyType: 'each' }), at('2026-05-31T10:00:00Z'))).toBe(
      at('2026-07-31T08:00:00Z'),
    );
  });

  it('monthlyType on: ordinal and ordinalValue', () => {
    const on = (ordinal: DigestTimedConfig['ordinal'], ordinalValue: DigestTimedConfig['ordinalValue']) =>
      endsAt(timed({ atTime: '09:00', monthlyType: 'on', ordinal, ordinalValue }));
    expect(on('last', 'friday')).toBe(at('2026-05-29T09:00:00Z'));
    expect(on('1', 'monday')).toBe(at('2026-05-04T09:00:00Z'));
    expect(on('last', 'weekday')).toBe(at('2026-05-29T09:00:00Z'));
    expect(on('last', 'day')).toBe(at('2026-05-31T09:00:00Z'));
    expect(on('1', 'weekend')).toBe(at('2026-05-02T09:00:00Z'));
    expect(on('2', 'day')).toBe(at('2026-05-02T09:00:00Z'));
    expect(on('1', 'day')).toBe(at('2026-06-01T09:00:00Z'));
    expect(on('1', 'weekday')).toBe(at('2026-06-01T09:00:00Z'));
    expect(on('5', 'sunday')).toBe(at('2026-05-31T09:00:00Z'));
    // May 2026 has four Mondays; June has five
    expect(on('5', 'monday')).toBe(at('2026-06-29T09:00:00Z'));
    // nor does May have a fifth Tuesday (5..26); June's are 2..30
    expect(on('5', 'tuesday')).toBe(at('2026-06-30T09:00:00Z'));
  });

  it('monthlyType on ignores monthDays', () => {
    expect(endsAt(timed({ atTime: '09:00', monthlyType: 'on', ordinal: '1', ordinalValue: 'monday', monthDays: [20] }))).toBe(
      at('2026-05-04T09:00:00Z'),
    );
  });

  it('needs every constraint that is set', () => {
    expect(endsAt(timed({ atTime: '09:00', weekDays: ['monday'], monthDays: [1] }))).toBe(at('2026-06-01T09:00:00Z'));
  });

  it('reports invalid settings', () => {
    const error = (config: DigestTimedConfig, timezone?: string) => computeDigestWindow(timed(config), { nowMs: now, timezone });
    expect(error({ atTime: '25:00' })).toEqual({ error: 'Digest atTime must be HH:mm, got "25:00"' });
    expect(error({ weekDays: ['funday' as 'monday'] })).toEqual({ error: 'Unknown digest weekDay "funday"' });
    expect(error({ monthDays: [0] })).toHaveProperty('error');
    expect(error({ monthDays: [1.5] })).toHaveProperty('error');
    expect(error({ monthlyType: 'on', ordinalValue: 'monday' })).toHaveProperty('error');
    expect(error({ monthlyType: 'on', ordinal: '1', ordinalValue: 'someday' as 'day' })).toHaveProperty('error');
    expect(error({ atTime: '09:00' }, 'Mars/Olympus')).toEqual({ error: 'Unknown timezone "Mars/Olympus"' });
    expect(error({ untilDate: 'soon' })).toHaveProperty('error');
  });

  it('reports a rule that never matches within 8 years', () => {
    // the first Sunday of a month is never a Monday
    const never = timed({ weekDays: ['monday'], monthlyType: 'on', ordinal: '1', ordinalValue: 'sunday' });
    expect(computeDigestWindow(never, { nowMs: now })).toEqual({ error: 'Timed digest: no matching day within 8 years' });
  });
});

describe('computeDigestWindow: timed by cron', () => {
  it('uses the next cron occurrence, in the timezone', () => {
    expect(endsAt(timed({ cronExpression: '0 9 * * 1' }))).toBe(at('2026-05-04T09:00:00Z'));
    expect(endsAt(timed({ cronExpression: '0 9 * * 1' }), now, 'America/New_York')).toBe(at('2026-05-04T13:00:00Z'));
    expect(endsAt(timed({ cronExpression: '*/15 * * * *' }))).toBe(at('2026-05-01T12:15:00Z'));
    expect(endsAt(timed({ cronExpression: '0 9 * * 1', atTime: '23:00', weekDays: ['friday'] }))).toBe(at('2026-05-04T09:00:00Z'));
  });

  it('reports an invalid expression', () => {
    const result = computeDigestWindow(timed({ cronExpression: 'every monday' }), { nowMs: now });
    expect(result).toHaveProperty('error');
    expect((result as { error: string }).error).toMatch(/^Invalid digest cronExpression "every monday"/);
  });
});

describe('computeDigestWindow: untilDate', () => {
  it('keeps the schedule until untilDate, then sends at once', () => {
    expect(endsAt(timed({ atTime: '13:00', untilDate: '2026-05-01T13:00:00Z' }))).toBe(at('2026-05-01T13:00:00Z'));
    expect(computeDigestWindow(timed({ atTime: '13:00', untilDate: '2026-05-01T12:59:59Z' }), { nowMs: now })).toEqual({
      windowEndsAt: now,
      immediate: true,
    });
    expect(computeDigestWindow(timed({ cronExpression: '0 9 * * 1', untilDate: '2026-05-02' }), { nowMs: now })).toEqual({
      windowEndsAt: now,
      immediate: true,
    });
  });
});

describe('isValidTimezone', () => {
  it('accepts IANA names and rejects others', () => {
    expect(isValidTimezone('Europe/Paris')).toBe(true);
    expect(isValidTimezone('UTC')).toBe(true);
    expect(isValidTimezone('Nowhere/Land')).toBe(false);
  });
});
