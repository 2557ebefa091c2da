import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/**
 * Whether this process's event loop is saturated: its utilisation (the share of time it spent running callbacks
 * rather than waiting for I/O, Node's `eventLoopUtilization`) over the last sampling window reached `threshold`.
 * Embedded, the API and the worker share one loop: a job waiting on a slow provider does not load it, so only a full
 * loop says the CPU is what the two compete for.
 */
export function loopSaturation(options: { windowMs?: number; threshold?: number } = {}): { saturated(): boolean; stop(): void } {
  const windowMs = options.windowMs ?? 50;
  const threshold = options.threshold ?? 0.8;
  let previous = performance.eventLoopUtilization();
  let saturated = false;
  const timer = setInterval(() => {
    const current = performance.eventLoopUtilization();
    saturated = isSaturated(previous, current, threshold);
    previous = current;
  }, windowMs);
  // Never keeps the process alive.
  timer.unref();
  return { saturated: () => saturated, stop: () => clearInterval(timer) };
}

/** The rule: utilisation between two cumulative readings at or over `threshold` (an empty window is not saturated). */
export function isSaturated(previous: EventLoopUtilization, current: EventLoopUtilization, threshold: number): boolean {
  const active = current.active - previous.active;
  const idle = current.idle - previous.idle;
  const total = active + idle;
  return total > 0 && active / total >= threshold;
}
