import { describe, expect, it } from 'vitest';
import { computeDelayUntil } from '../../src/domain/delay.js';

const now = Date.parse('2026-05-01T12:00:00.000Z');

describe('computeDelayUntil: regular', () => {
  it('waits amount units from now', () => {
    expect(computeDelayUntil({ type: 'regular', amount: 5, unit: 'minutes' }, {}, now)).toEqual({ runAt: now + 300_000 });
    expect(computeDelayUntil({ type: 'regular', amount: 0, unit: 'seconds' }, {}, now)).toEqual({ runAt: now });
    expect(computeDelayUntil({ type: 'regular', amount: 1, unit: 'months' }, {}, now)).toEqual({
      runAt: Date.parse('2026-06-01T12:00:00.000Z'),
    });
  });

  it('treats a missing type as regular', () => {
    expect(computeDelayUntil({ amount: 2, unit: 'hours' }, undefined, now)).toEqual({ runAt: now + 7_200_000 });
  });

  it('reports a bad amount or unit', () => {
    expect(computeDelayUntil({ type: 'regular', unit: 'hours' }, {}, now)).toEqual({
      error: 'Delay amount must be a non-negative number, got undefined',
    });
    expect(computeDelayUntil({ type: 'regular', amount: -1, unit: 'hours' }, {}, now)).toHaveProperty('error');
    expect(computeDelayUntil({ type: 'regular', amount: 1, unit: 'fortnights' }, {}, now)).toEqual({
      error: 'Delay unit must be one of seconds, minutes, hours, days, weeks, months, got "fortnights"',
    });
    expect(computeDelayUntil(undefined, {}, now)).toHaveProperty('error');
  });
});

describe('computeDelayUntil: scheduled', () => {
  const scheduled = (delayPath: string) => ({ type: 'scheduled', delayPath });

  it('runs at the ISO date found at the payload path', () => {
    const payload = { sendAt: '2026-05-02T09:30:00.000Z', meta: { at: '2026-05-01T14:00:00+02:00' } };
    expect(computeDelayUntil(scheduled('sendAt'), payload, now)).toEqual({ runAt: Date.parse('2026-05-02T09:30:00Z') });
    expect(computeDelayUntil(scheduled('meta.at'), payload, now)).toEqual({ runAt: Date.parse('2026-05-01T12:00:00Z') + 0 });
    expect(computeDelayUntil(scheduled('payload.sendAt'), payload, now)).toEqual({
      runAt: Date.parse('2026-05-02T09:30:00Z'),
    });
  });

  it('reads dates without an offset as UTC', () => {
    expect(computeDelayUntil(scheduled('d'), { d: '2026-05-03' }, now)).toEqual({ runAt: Date.parse('2026-05-03T00:00:00Z') });
    expect(computeDelayUntil(scheduled('d'), { d: '2026-05-03T08:00' }, now)).toEqual({
      runAt: Date.parse('2026-05-03T08:00:00Z'),
    });
    expect(computeDelayUntil(scheduled('d'), { d: '2026-05-03 08:00:00' }, now)).toEqual({
      runAt: Date.parse('2026-05-03T08:00:00Z'),
    });
  });

  it('runs now when the date is in the past', () => {
    expect(computeDelayUntil(scheduled('d'), { d: '2020-01-01T00:00:00Z' }, now)).toEqual({ runAt: now });
  });

  it('reports a missing path, a missing value and an invalid date', () => {
    expect(computeDelayUntil({ type: 'scheduled' }, {}, now)).toEqual({ error: 'Scheduled delay has no delayPath' });
    expect(computeDelayUntil(scheduled('sendAt'), {}, now)).toEqual({ error: 'Scheduled delay: payload.sendAt is missing' });
    expect(computeDelayUntil(scheduled('sendAt'), { sendAt: 'tomorrow' }, now)).toEqual({
      error: 'Scheduled delay: payload.sendAt is not an ISO 8601 date: "tomorrow"',
    });
    expect(computeDelayUntil(scheduled('sendAt'), { sendAt: '2026-13-45' }, now)).toHaveProperty('error');
    expect(computeDelayUntil(scheduled('sendAt'), { sendAt: 1767225600000 }, now)).toHaveProperty('error');
  });

  it('reports an unknown type', () => {
    expect(computeDelayUntil({ type: 'timed' }, {}, now)).toEqual({ error: 'Unknown delay type "timed"' });
  });
});
