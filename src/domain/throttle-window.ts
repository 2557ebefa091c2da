/** Throttle steps: at most `limit` sends per sliding window, per subscriber (or throttle key). */
import { toMilliseconds } from './time-units.js';
import type { TimeUnit } from './types.js';

export interface ThrottleInput {
  /** Sends allowed within one window; 0 blocks everything. */
  limit: number;
  windowMs: number;
  /**
   * When earlier events of the same subscriber/key passed this throttle (epoch ms). Only those inside the window
   * count, so the caller may pass a superset; the event being decided is not in it.
   */
  sentTimestampsMs: number[];
  nowMs: number;
}

export interface ThrottleDecision {
  /** True: this event passes and should be recorded as sent; false: its job ends `skipped`. */
  allowed: boolean;
  /** Start of the window, exclusive: the window is (windowStartsAt, nowMs]. Query from here to count sends. */
  windowStartsAt: number;
}

/**
 * A sliding-window decision: the event passes when fewer than `limit` earlier sends fall in (now - windowMs, now].
 * A send exactly `windowMs` ago has left the window; timestamps after now (clock skew) still count.
 */
export function throttleDecision({ limit, windowMs, sentTimestampsMs, nowMs }: ThrottleInput): ThrottleDecision {
  if (!Number.isFinite(limit) || limit < 0) throw new RangeError(`throttle limit must be a non-negative number, got ${limit}`);
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new RangeError(`throttle window must be positive, got ${windowMs}`);
  const windowStartsAt = nowMs - windowMs;
  const sentInWindow = sentTimestampsMs.filter((sentAt) => sentAt > windowStartsAt).length;
  return { allowed: sentInWindow < limit, windowStartsAt };
}

/** The window length of a throttle step's `{ amount, unit }` (a month is 30 days); throws on bad settings. */
export function throttleWindowMs({ amount, unit }: { amount: number; unit: TimeUnit }): number {
  const windowMs = toMilliseconds(amount, unit);
  if (windowMs <= 0) throw new RangeError(`throttle window must be positive, got ${amount} ${unit}`);
  return windowMs;
}
