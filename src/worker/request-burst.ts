/**
 * Whether requests are arriving as a burst: at least `count` of them within the last `windowMs`. Embedded, the worker
 * yields to the API only then (with a saturated loop, see main.ts). A single request every now and then (a dashboard
 * or an inbox polling, a health check) is not a burst: during a drain the loop is saturated by the worker itself, and
 * each lone request capped the worker to its few slots for the window after it, whose deliveries then committed a few
 * at a time instead of a full group (BENCHMARKS.md, session 21, issue 24).
 */
export function requestBurst(options: { count: number; windowMs: number }): { arrived(at: number): void; active(at: number): boolean } {
  const count = Math.max(1, Math.floor(options.count));
  // The arrival times of the last `count` requests, a ring: the oldest of them is the next to be overwritten.
  const times = new Array<number>(count).fill(-Infinity);
  let next = 0;
  return {
    arrived(at) {
      times[next] = at;
      next = (next + 1) % count;
    },
    active(at) {
      return at - times[next]! < options.windowMs;
    },
  };
}
