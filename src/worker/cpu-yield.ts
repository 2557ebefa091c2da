import { readFileSync } from 'node:fs';

/**
 * Scale-out: a worker process that shares its host with an API process runs niced (config `worker.nice`), but the
 * PostgreSQL and Redis work its jobs cause runs in their server processes at their own priority and competes with the
 * API's. While the worker's own thread waits for the CPU (the host is busy with something of higher priority, the
 * API's burst), it runs fewer jobs at once, so its database work gives way too; it runs them all again once it gets
 * the CPU back. The embedded mode's `SqlQueue.shareWith` is the same rule inside one process. docs/scale-out.md.
 */

/** The main thread's scheduler counters: ns on a CPU, ns runnable but waiting for one (Linux `schedstat`). */
export interface SchedStat {
  runNs: number;
  waitNs: number;
}

/**
 * This thread's counters from /proc/thread-self/schedstat (Linux with schedstats, the default); undefined elsewhere,
 * where the worker never yields.
 */
export function readSchedStat(path = '/proc/thread-self/schedstat'): SchedStat | undefined {
  try {
    return parseSchedStat(readFileSync(path, 'latin1'));
  } catch {
    return undefined;
  }
}

/** `<ns on cpu> <ns waiting on a run queue> <timeslices>`; undefined for anything else. */
export function parseSchedStat(text: string): SchedStat | undefined {
  const [run, wait] = text.trim().split(/\s+/).map(Number);
  if (run === undefined || wait === undefined || !Number.isFinite(run) || !Number.isFinite(wait)) return undefined;
  return { runNs: run, waitNs: wait };
}

/**
 * The share of the time this thread wanted the CPU in which it waited for it, between two readings: 0 when it ran
 * whenever it was runnable, 0.9 when it ran a tenth of that time. 0 when it neither ran nor waited (an idle worker).
 */
export function waitShare(previous: SchedStat, current: SchedStat): number {
  const run = Math.max(0, current.runNs - previous.runNs);
  const wait = Math.max(0, current.waitNs - previous.waitNs);
  return run + wait > 0 ? wait / (run + wait) : 0;
}

/**
 * Whether a worker yields at all: only a niced one (niceness 0 says it must not give way to what shares its host),
 * only with a lower limit than its concurrency (`yieldConcurrency` 0 turns it off).
 */
export function yieldsCpu(worker: { concurrency: number; yieldConcurrency: number }, nice: number): boolean {
  return nice > 0 && worker.yieldConcurrency > 0 && worker.yieldConcurrency < worker.concurrency;
}

export interface CpuYieldOptions {
  /** Jobs at once when the worker gets the CPU (config `worker.concurrency`). */
  concurrency: number;
  /** Jobs at once while it yields (never below 1: the queue always moves). */
  floor: number;
  /** A sample whose wait share reaches this counts as starved. */
  threshold: number;
  /** The worker keeps yielding this long after its last starved sample (one good sample is not the end of a burst). */
  holdMs: number;
  /**
   * The yield budget: yielding spends it, running all jobs earns it back at the same rate, up to this much. Once it is
   * spent the worker runs all its jobs until it is whole again, whatever the samples say, so over any long stretch it
   * yields at most half the time (plus one budget), however the load comes: in one unbroken burst or in bursts with
   * short lulls between them. The backlog a yield builds drains meanwhile.
   */
  maxYieldMs: number;
}

export interface CpuYieldState {
  /** Yield time left (ms); Infinity before the first sample (a whole budget). */
  budgetMs: number;
  /** The previous sample's time (undefined before the first). */
  lastAt?: number;
  /** The last starved sample. */
  lastStarvedAt: number;
  /** Whether the worker ran `floor` jobs since the previous sample. */
  yielding: boolean;
  /** The budget was spent: all jobs until it is whole again. */
  refilling: boolean;
}

export const initialCpuYieldState: CpuYieldState = { budgetMs: Infinity, lastStarvedAt: -Infinity, yielding: false, refilling: false };

/**
 * The rule, one sample at a time: starved (wait share ≥ threshold) → `floor` jobs, kept for `holdMs` after the last
 * starved sample, while the yield budget lasts (`maxYieldMs`); a spent budget means `concurrency` until it is whole
 * again. Otherwise `concurrency`.
 */
export function nextCpuYield(
  state: CpuYieldState,
  sample: { at: number; waitShare: number },
  options: CpuYieldOptions,
): { state: CpuYieldState; concurrency: number } {
  const full = Math.max(1, options.concurrency);
  const floor = Math.max(1, Math.min(full, options.floor));
  const { at } = sample;
  const elapsed = state.lastAt === undefined ? 0 : Math.max(0, at - state.lastAt);
  const budgetMs = state.yielding ? state.budgetMs - elapsed : Math.min(options.maxYieldMs, state.budgetMs + elapsed);
  const refilling = state.refilling ? budgetMs < options.maxYieldMs : budgetMs <= 0;
  const lastStarvedAt = sample.waitShare >= options.threshold ? at : state.lastStarvedAt;
  const yielding = !refilling && at - lastStarvedAt < options.holdMs;
  return { state: { budgetMs, lastAt: at, lastStarvedAt, yielding, refilling }, concurrency: yielding ? floor : full };
}

/**
 * Samples this thread's schedstat every `sampleMs` and sets the queue's concurrency by `nextCpuYield`. Does nothing
 * (returns a no-op stop) where schedstat cannot be read. The timer never keeps the process alive.
 */
export function startCpuYield(
  setConcurrency: (concurrency: number) => void,
  options: CpuYieldOptions & { sampleMs: number; read?: () => SchedStat | undefined; now?: () => number },
): { stop(): void } {
  const read = options.read ?? (() => readSchedStat());
  const now = options.now ?? (() => performance.now());
  let previous = read();
  if (!previous) return { stop: () => undefined };
  let state = initialCpuYieldState;
  let concurrency = options.concurrency;
  const timer = setInterval(() => {
    const current = read();
    if (!current) return;
    const share = waitShare(previous!, current);
    previous = current;
    const next = nextCpuYield(state, { at: now(), waitShare: share }, options);
    state = next.state;
    if (next.concurrency !== concurrency) {
      concurrency = next.concurrency;
      setConcurrency(concurrency);
    }
  }, options.sampleMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
