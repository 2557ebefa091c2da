import { describe, expect, it } from 'vitest';
import { throttleDecision, throttleWindowMs } from '../../src/domain/throttle-window.js';

const now = 1_000_000;

describe('throttleDecision', () => {
  it('allows while fewer than limit sends fall in the window', () => {
    expect(throttleDecision({ limit: 2, windowMs: 60_000, sentTimestampsMs: [], nowMs: now })).toEqual({
      allowed: true,
      windowStartsAt: now - 60_000,
    });
    expect(throttleDecision({ limit: 2, windowMs: 60_000, sentTimestampsMs: [now - 10], nowMs: now }).allowed).toBe(true);
    expect(throttleDecision({ limit: 2, windowMs: 60_000, sentTimestampsMs: [now - 10, now - 20], nowMs: now }).allowed).toBe(false);
  });

  it('ignores sends that left the window; the window start is exclusive', () => {
    const old = [now - 60_000, now - 90_000, now - 1_000_000];
    expect(throttleDecision({ limit: 1, windowMs: 60_000, sentTimestampsMs: old, nowMs: now }).allowed).toBe(true);
    expect(throttleDecision({ limit: 1, windowMs: 60_000, sentTimestampsMs: [now - 59_999], nowMs: now }).allowed).toBe(false);
  });

  it('counts sends at now and slightly after (clock skew)', () => {
    expect(throttleDecision({ limit: 1, windowMs: 60_000, sentTimestampsMs: [now], nowMs: now }).allowed).toBe(false);
    expect(throttleDecision({ limit: 1, windowMs: 60_000, sentTimestampsMs: [now + 5], nowMs: now }).allowed).toBe(false);
  });

  it('a limit of 0 blocks everything', () => {
    expect(throttleDecision({ limit: 0, windowMs: 1_000, sentTimestampsMs: [], nowMs: now }).allowed).toBe(false);
  });

  it('rejects nonsense settings', () => {
    expect(() => throttleDecision({ limit: -1, windowMs: 1_000, sentTimestampsMs: [], nowMs: now })).toThrow(/limit/);
    expect(() => throttleDecision({ limit: 1, windowMs: 0, sentTimestampsMs: [], nowMs: now })).toThrow(/window/);
    expect(() => throttleDecision({ limit: Number.NaN, windowMs: 10, sentTimestampsMs: [], nowMs: now })).toThrow(/limit/);
  });
});

describe('throttleWindowMs', () => {
  it('converts amount and unit', () => {
    expect(throttleWindowMs({ amount: 5, unit: 'minutes' })).toBe(300_000);
    expect(throttleWindowMs({ amount: 1, unit: 'months' })).toBe(30 * 86_400_000);
  });
  it('rejects an empty window', () => {
    expect(() => throttleWindowMs({ amount: 0, unit: 'hours' })).toThrow(/positive/);
  });
});
