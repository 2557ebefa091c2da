import { afterEach, describe, expect, it, vi } from 'vitest';
import { initialCpuYieldState, nextCpuYield, yieldsCpu, parseSchedStat, readSchedStat, startCpuYield, waitShare, type CpuYieldOptions, type CpuYieldState } from '../../src/worker/cpu-yield.js';

const options: CpuYieldOptions = { concurrency: 32, floor: 4, threshold: 0.5, holdMs: 750, maxYieldMs: 30_000 };

/** Feeds samples every `stepMs` from `from` until `to` (exclusive), each with the share `share(at)`; the concurrencies. */
function run(state: CpuYieldState, from: number, to: number, stepMs: number, share: (at: number) => number, opts = options) {
  const concurrencies: number[] = [];
  for (let at = from; at < to; at += stepMs) {
    const next = nextCpuYield(state, { at, waitShare: share(at) }, opts);
    state = next.state;
    concurrencies.push(next.concurrency);
  }
  return { state, concurrencies };
}

describe('parseSchedStat and waitShare', () => {
  it('reads the ns on a CPU and the ns waiting for one', () => {
    expect(parseSchedStat('123456 7890 12\n')).toEqual({ runNs: 123456, waitNs: 7890 });
    expect(parseSchedStat('')).toBeUndefined();
    expect(parseSchedStat('abc def')).toBeUndefined();
  });

  it('is the share of the runnable time spent waiting, 0 for a thread that neither ran nor waited', () => {
    expect(waitShare({ runNs: 100, waitNs: 100 }, { runNs: 130, waitNs: 170 })).toBe(0.7);
    expect(waitShare({ runNs: 100, waitNs: 100 }, { runNs: 200, waitNs: 100 })).toBe(0);
    expect(waitShare({ runNs: 100, waitNs: 100 }, { runNs: 100, waitNs: 100 })).toBe(0);
  });

  it('is undefined where schedstat cannot be read (the worker then never yields)', () => {
    expect(readSchedStat('/nonexistent/schedstat')).toBeUndefined();
  });
});

describe('yieldsCpu', () => {
  it('only a niced worker with a lower limit than its concurrency yields', () => {
    expect(yieldsCpu({ concurrency: 32, yieldConcurrency: 2 }, 19)).toBe(true);
    expect(yieldsCpu({ concurrency: 32, yieldConcurrency: 2 }, 0)).toBe(false);
    expect(yieldsCpu({ concurrency: 32, yieldConcurrency: 0 }, 19)).toBe(false);
    expect(yieldsCpu({ concurrency: 2, yieldConcurrency: 2 }, 19)).toBe(false);
  });
});

describe('nextCpuYield', () => {
  it('runs `floor` jobs from a starved sample on, and all of them once no sample has been starved for `holdMs`', () => {
    let step = nextCpuYield(initialCpuYieldState, { at: 0, waitShare: 0.3 }, options);
    expect(step.concurrency).toBe(32);
    step = nextCpuYield(step.state, { at: 250, waitShare: 0.5 }, options);
    expect(step.concurrency).toBe(4);
    // One good sample within the hold is not the end of the burst.
    step = nextCpuYield(step.state, { at: 500, waitShare: 0.2 }, options);
    expect(step.concurrency).toBe(4);
    step = nextCpuYield(step.state, { at: 750, waitShare: 0.6 }, options);
    expect(step.concurrency).toBe(4);
    step = nextCpuYield(step.state, { at: 1250, waitShare: 0.2 }, options);
    expect(step.concurrency).toBe(4);
    step = nextCpuYield(step.state, { at: 1500, waitShare: 0.2 }, options);
    expect(step.concurrency).toBe(32);
  });

  it('never runs fewer than one job, nor more than `concurrency`', () => {
    expect(nextCpuYield(initialCpuYieldState, { at: 0, waitShare: 1 }, { ...options, floor: 0 }).concurrency).toBe(1);
    expect(nextCpuYield(initialCpuYieldState, { at: 0, waitShare: 1 }, { ...options, concurrency: 2, floor: 4 }).concurrency).toBe(2);
  });

  it('under a load that never ends, yields for `maxYieldMs`, then runs all its jobs for as long, and again', () => {
    const { concurrencies } = run(initialCpuYieldState, 0, 600_000, 250, () => 0.9);
    // Starved throughout, yet full concurrency half of the time, in turns of 30 s.
    const full = concurrencies.filter((c) => c === 32).length;
    expect(full / concurrencies.length).toBeCloseTo(0.5, 2);
    expect(concurrencies.slice(0, 120).every((c) => c === 4)).toBe(true); // 0 - 29.75 s
    expect(concurrencies.slice(120, 240).every((c) => c === 32)).toBe(true); // 30 - 59.75 s
    expect(concurrencies[240]).toBe(4); // 60 s: yields again
  });

  it('a burst shorter than the budget is yielded to throughout; a lull earns back only what it lasts', () => {
    const burst = (at: number) => ((at >= 1000 && at < 21_000) || (at >= 25_000 && at < 45_000) ? 0.7 : 0.2);
    const { concurrencies } = run(initialCpuYieldState, 0, 80_000, 250, burst);
    const at = (ms: number) => concurrencies[ms / 250];
    expect(at(750)).toBe(32);
    expect([at(1000), at(10_000), at(20_750), at(21_250)]).toEqual([4, 4, 4, 4]);
    expect(at(21_500)).toBe(32); // holdMs after the last starved sample
    // 20.5 s spent, 3.5 s earned back: the second burst is yielded to for 13 s, then all jobs run until the budget is whole.
    expect([at(25_000), at(37_750)]).toEqual([4, 4]);
    expect([at(38_000), at(44_750), at(67_750)]).toEqual([32, 32, 32]);
  });

  it('bursts with short lulls between them are yielded to at most about half the time', () => {
    // Starved for 20 s, then 1 s calm, over and over for 10 minutes: each lull alone would end a run of yielding.
    const { concurrencies } = run(initialCpuYieldState, 0, 600_000, 250, (at) => (at % 21_000 < 20_000 ? 0.9 : 0.1));
    const yielded = concurrencies.filter((c) => c === 4).length / concurrencies.length;
    expect(yielded).toBeGreaterThan(0.4);
    expect(yielded).toBeLessThan(0.56);
  });
});

describe('startCpuYield', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('samples the thread every `sampleMs` and sets the concurrency only when it changes', () => {
    vi.useFakeTimers();
    let clock = 0;
    let stat = { runNs: 0, waitNs: 0 };
    const shares = [0.1, 0.8, 0.8, 0.1, 0.1, 0.1, 0.1];
    let sample = 0;
    const read = () => {
      const share = shares[Math.min(sample, shares.length - 1)]!;
      if (clock > 0) sample++;
      stat = { runNs: stat.runNs + 1e6 * (1 - share), waitNs: stat.waitNs + 1e6 * share };
      return stat;
    };
    const set: number[] = [];
    const handle = startCpuYield((c) => set.push(c), { ...options, holdMs: 500, sampleMs: 250, read, now: () => clock });
    for (let n = 0; n < shares.length; n++) {
      clock += 250;
      vi.advanceTimersByTime(250);
    }
    handle.stop();
    expect(set).toEqual([4, 32]);
  });

  it('does nothing where schedstat cannot be read', () => {
    vi.useFakeTimers();
    const set: number[] = [];
    const handle = startCpuYield((c) => set.push(c), { ...options, sampleMs: 250, read: () => undefined });
    vi.advanceTimersByTime(10_000);
    handle.stop();
    expect(set).toEqual([]);
  });
});
