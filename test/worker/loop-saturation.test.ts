import { describe, expect, it } from 'vitest';
import { isSaturated, loopSaturation } from '../../src/worker/loop-saturation.js';

const reading = (active: number, idle: number) => ({ active, idle, utilization: active / (active + idle || 1) });

describe('isSaturated', () => {
  it('compares the utilisation between two cumulative readings with the threshold', () => {
    expect(isSaturated(reading(100, 100), reading(190, 105), 0.9)).toBe(true); // 90 of 95 ms busy
    expect(isSaturated(reading(100, 100), reading(180, 120), 0.9)).toBe(false); // 80 of 100
    expect(isSaturated(reading(0, 0), reading(50, 0), 0.9)).toBe(true);
  });

  it('does not call an empty window saturated', () => {
    expect(isSaturated(reading(10, 10), reading(10, 10), 0.9)).toBe(false);
  });
});

describe('loopSaturation', () => {
  it('says saturated after a window spent running code, and not after an idle one', async () => {
    const loop = loopSaturation({ windowMs: 20, threshold: 0.9 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(loop.saturated()).toBe(false);
      // Busy for many windows without yielding; the sampling timer runs as soon as the loop is free again, and its
      // window (since the last sample) is then mostly this busy time.
      const until = performance.now() + 300;
      while (performance.now() < until) Math.sqrt(Math.random());
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(loop.saturated()).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(loop.saturated()).toBe(false);
    } finally {
      loop.stop();
    }
  });
});
