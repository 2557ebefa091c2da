import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisRateLimitStore } from '../src/store/redis/rate-limit-store.js';
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

/** A command connection that answers a batch's script call at once (a single counter: no pipeline). */
function fakeRedis(answer: (hits: number) => Promise<number>): Redis {
  return { defineCommand() {}, status: 'ready', heraldRateLimitHits: (_key: string, _ttl: number, hits: number) => answer(hits) } as unknown as Redis;
}

describe('RedisRateLimitStore with gathered answers (herald api)', () => {
  it('answers a batch\'s counts after the turn, together, unchanged; errors at once', async () => {
    let total = 0;
    const store = new RedisRateLimitStore(fakeRedis(async (hits) => (total += hits)), 'p', valueGathering());
    const answered: number[] = [];
    const pending = [store.hit('env', 'global', 'w', 60), store.hit('env', 'global', 'w', 60), store.hit('env', 'global', 'w', 60)].map((hit) =>
      hit.then((count) => (answered.push(count), count)),
    );
    // Every count is in well within these microtasks; none goes on before the turn's setImmediate.
    await microtasks(50);
    expect(answered).toEqual([]);
    expect(total).toBe(3);
    expect(await Promise.all(pending)).toEqual([1, 2, 3]);
    expect(answered).toEqual([1, 2, 3]);

    const plain = new RedisRateLimitStore(fakeRedis(async (hits) => (total += hits)), 'p');
    const direct: number[] = [];
    void plain.hit('env', 'global', 'w', 60).then((count) => direct.push(count));
    await microtasks(50);
    expect(direct).toEqual([4]);

    const failing = new RedisRateLimitStore(fakeRedis(async () => Promise.reject(new Error('WRONGTYPE'))), 'p', valueGathering());
    let failed: unknown;
    void failing.hit('env', 'global', 'w', 60).catch((error: unknown) => (failed = error));
    await microtasks(50);
    expect((failed as Error | undefined)?.message).toBe('WRONGTYPE');
  });
});
