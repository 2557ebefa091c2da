import { describe, expect, it } from 'vitest';
import { addTimeUnit, isTimeUnit, toMilliseconds } from '../../src/domain/time-units.js';
import type { TimeUnit } from '../../src/domain/types.js';

const at = (iso: string) => Date.parse(iso);

describe('toMilliseconds', () => {
  it('converts every unit, a month being 30 days', () => {
    expect(toMilliseconds(2, 'seconds')).toBe(2_000);
    expect(toMilliseconds(3, 'minutes')).toBe(180_000);
    expect(toMilliseconds(1.5, 'hours')).toBe(5_400_000);
    expect(toMilliseconds(1, 'days')).toBe(86_400_000);
    expect(toMilliseconds(2, 'weeks')).toBe(14 * 86_400_000);
    expect(toMilliseconds(1, 'months')).toBe(30 * 86_400_000);
    expect(toMilliseconds(0, 'days')).toBe(0);
  });

  it('rejects unknown units and non-finite amounts', () => {
    expect(() => toMilliseconds(1, 'years' as TimeUnit)).toThrow(/unit must be one of/);
    expect(() => toMilliseconds(Number.NaN, 'days')).toThrow(/finite/);
    expect(() => toMilliseconds(Infinity, 'days')).toThrow(/finite/);
  });

  it('recognises time units', () => {
    expect(isTimeUnit('weeks')).toBe(true);
    expect(isTimeUnit('week')).toBe(false);
    expect(isTimeUnit(3)).toBe(false);
  });
});

describe('addTimeUnit', () => {
  it('adds fixed-length units', () => {
    expect(addTimeUnit(at('2026-03-28T10:00:00Z'), 2, 'days')).toBe(at('2026-03-30T10:00:00Z'));
    expect(addTimeUnit(at('2026-03-28T10:00:00Z'), 90, 'minutes')).toBe(at('2026-03-28T11:30:00Z'));
    expect(addTimeUnit(at('2026-03-28T10:00:00Z'), 1, 'weeks')).toBe(at('2026-04-04T10:00:00Z'));
    expect(addTimeUnit(at('2026-03-28T10:00:00Z'), -30, 'seconds')).toBe(at('2026-03-28T09:59:30Z'));
  });

  it('adds calendar months, clamping to the last day of the target month', () => {
    expect(addTimeUnit(at('2026-01-15T08:30:00.250Z'), 1, 'months')).toBe(at('2026-02-15T08:30:00.250Z'));
    expect(addTimeUnit(at('2026-01-31T08:00:00Z'), 1, 'months')).toBe(at('2026-02-28T08:00:00Z'));
    expect(addTimeUnit(at('2028-01-31T08:00:00Z'), 1, 'months')).toBe(at('2028-02-29T08:00:00Z'));
    expect(addTimeUnit(at('2026-11-30T00:00:00Z'), 3, 'months')).toBe(at('2027-02-28T00:00:00Z'));
    expect(addTimeUnit(at('2026-03-31T00:00:00Z'), -1, 'months')).toBe(at('2026-02-28T00:00:00Z'));
    expect(addTimeUnit(at('2026-01-10T00:00:00Z'), -13, 'months')).toBe(at('2024-12-10T00:00:00Z'));
    expect(addTimeUnit(at('2026-01-10T00:00:00Z'), 24, 'months')).toBe(at('2028-01-10T00:00:00Z'));
  });

  it('adds the fractional part of a month as 30-day months', () => {
    expect(addTimeUnit(at('2026-01-01T00:00:00Z'), 1.5, 'months')).toBe(at('2026-02-16T00:00:00Z'));
  });

  it('rejects non-finite input', () => {
    expect(() => addTimeUnit(Number.NaN, 1, 'days')).toThrow(/fromMs/);
    expect(() => addTimeUnit(0, Number.NaN, 'months')).toThrow(/amount/);
  });
});
