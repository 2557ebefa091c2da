import { describe, expect, it } from 'vitest';
import { turnGathering, valueGathering } from '../src/turn-gathering.js';

const microtasks = async (n = 10) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe('turnGathering', () => {
  it('runs a turn\'s continuations together, in order, from one setImmediate after the turn', async () => {
    const gather = turnGathering();
    const order: string[] = [];
    gather(() => order.push('a'));
    gather(() => order.push('b'));
    await microtasks();
    expect(order).toEqual([]);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(order).toEqual(['a', 'b']);
    // A later turn's continuations wait for a callback of their own.
    gather(() => order.push('c'));
    await microtasks();
    expect(order).toEqual(['a', 'b']);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('hands on the very value it was given', async () => {
    const value = { rows: [1] };
    expect(await valueGathering()(value)).toBe(value);
  });
});
