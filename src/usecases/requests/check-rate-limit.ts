import { RateLimitedError } from '../../domain/errors.js';
import type { Deps } from '../deps.js';

export type RateLimitCategory = 'trigger' | 'configuration' | 'global' | 'inbox' | 'inbox-session' | 'provider-reports';

export interface CheckRateLimitInput {
  /**
   * Whose counter: the environment id, or for the Inbox `subscriber:<record id>` / `application:<identifier>`, or for
   * provider delivery reports `integration:<id>`.
   */
  environmentId: string;
  category: RateLimitCategory;
}

function limitOf(config: Deps['config'], category: RateLimitCategory): number {
  if (category === 'inbox') return config.inbox.rateLimitPerSubscriber;
  if (category === 'inbox-session') return config.inbox.rateLimitSessionPerApplication;
  if (category === 'provider-reports') return config.deliveryReports.rateLimitPerIntegration;
  return config.rateLimit[category];
}

/** What the RateLimit-* headers report. `resetSeconds` counts to the end of the current window. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
  policy: string;
}

/** The last window's start and its text: every request of a window asks for the same one. */
let lastWindow = { startMs: NaN, text: '' };

/** The start of the fixed window holding `nowMs`, and the seconds left in it (at least 1). */
export function currentWindow(nowMs: number, windowSeconds: number): { windowStart: string; resetSeconds: number } {
  const windowMs = windowSeconds * 1000;
  const startMs = Math.floor(nowMs / windowMs) * windowMs;
  if (lastWindow.startMs !== startMs) lastWindow = { startMs, text: new Date(startMs).toISOString() };
  return { windowStart: lastWindow.text, resetSeconds: Math.max(1, Math.ceil((startMs + windowMs - nowMs) / 1000)) };
}

/**
 * Counts one request against the environment's limit for the category, fixed windows of
 * `config.rateLimit.windowSeconds`. Over the limit: RateLimitedError (429 + Retry-After), carrying the
 * state so the caller can still send the RateLimit-* headers. Returns undefined when limits are off.
 */
export async function checkRateLimit(deps: Pick<Deps, 'config' | 'clock' | 'rateLimits'>, input: CheckRateLimitInput): Promise<RateLimitState | undefined> {
  const settings = deps.config.rateLimit;
  if (!settings.enabled) return undefined;
  const { windowStart, resetSeconds } = currentWindow(deps.clock.now(), settings.windowSeconds);
  const count = await deps.rateLimits.hit(input.environmentId, input.category, windowStart, settings.windowSeconds);
  return stateAfter(deps.config, input.category, count, resetSeconds);
}

/**
 * checkRateLimit without a promise, for a store that counts in memory (`RateLimitStore.hitNow`); undefined when the
 * store has no such count (await checkRateLimit then) or limits are off.
 */
export function checkRateLimitNow(deps: Pick<Deps, 'config' | 'clock' | 'rateLimits'>, input: CheckRateLimitInput): RateLimitState | undefined {
  const settings = deps.config.rateLimit;
  if (!settings.enabled || !deps.rateLimits.hitNow) return undefined;
  const { windowStart, resetSeconds } = currentWindow(deps.clock.now(), settings.windowSeconds);
  const count = deps.rateLimits.hitNow(input.environmentId, input.category, windowStart, settings.windowSeconds);
  return stateAfter(deps.config, input.category, count, resetSeconds);
}

function stateAfter(config: Deps['config'], category: RateLimitCategory, count: number, resetSeconds: number): RateLimitState {
  const limit = limitOf(config, category);
  const state: RateLimitState = {
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds,
    policy: `${limit};w=${config.rateLimit.windowSeconds};name="${category}"`,
  };
  if (count > limit) throw new RateLimitExceeded(state);
  return state;
}

export class RateLimitExceeded extends RateLimitedError {
  constructor(readonly state: RateLimitState) {
    super(state.resetSeconds);
  }
}
