/** The one source of time, injected so delay/digest tests run in milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
