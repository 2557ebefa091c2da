import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitStore } from '../../../src/store/ports.js';
import { SqlRateLimitStore } from '../../../src/store/sql/rate-limit-store.js';
import { RedisRateLimitStore } from '../../../src/store/redis/rate-limit-store.js';
import { LocalRateLimitStore } from '../../../src/store/local-rate-limit-store.js';
import { openTestPostgres, openTestRedis, openTestSqlite, servicesAvailable, type TestRedis } from '../../helpers/databases.js';

/** One contract, every implementation: in memory (no Redis: one process), SQL on SQLite, SQL on PostgreSQL, Redis. */
interface Implementation {
  name: string;
  available: boolean;
  open(): Promise<{ store: RateLimitStore; close(): Promise<void> }>;
}

const implementations: Implementation[] = [
  {
    name: 'in memory',
    available: true,
    async open() {
      return { store: new LocalRateLimitStore(), close: async () => {} };
    },
  },
  {
    name: 'SQL on SQLite',
    available: true,
    async open() {
      const database = await openTestSqlite();
      return { store: new SqlRateLimitStore(database.db, 'sqlite'), close: database.close };
    },
  },
  {
    name: 'SQL on PostgreSQL',
    available: await servicesAvailable(['PostgreSQL']),
    async open() {
      const database = await openTestPostgres();
      return { store: new SqlRateLimitStore(database.db, 'postgres'), close: database.close };
    },
  },
  {
    name: 'Redis',
    available: await servicesAvailable(['Redis']),
    async open() {
      const redis = await openTestRedis();
      return { store: new RedisRateLimitStore(redis.redis, redis.prefix), close: redis.close };
    },
  },
];

const ENV_A = 'aaaaaaaaaaaaaaaaaaaaaaa1';
const ENV_B = 'bbbbbbbbbbbbbbbbbbbbbbb2';

function windowStart(offsetSeconds = 0): string {
  const now = Math.floor(Date.now() / 1000) * 1000;
  return new Date(now + offsetSeconds * 1000).toISOString();
}

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`RateLimitStore contract: ${implementation.name}`, () => {
    let store: RateLimitStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await implementation.open());
    });
    afterAll(async () => {
      await close?.();
    });

    it('counts hits within one window, returning the count after each', async () => {
      const window = windowStart();
      expect(await store.hit(ENV_A, 'trigger', window, 60)).toBe(1);
      expect(await store.hit(ENV_A, 'trigger', window, 60)).toBe(2);
      expect(await store.hit(ENV_A, 'trigger', window, 60)).toBe(3);
    });

    it('keeps separate counters per environment, category and window', async () => {
      const window = windowStart(-120);
      expect(await store.hit(ENV_A, 'configuration', window, 60)).toBe(1);
      expect(await store.hit(ENV_A, 'configuration', window, 60)).toBe(2);
      expect(await store.hit(ENV_B, 'configuration', window, 60)).toBe(1);
      expect(await store.hit(ENV_A, 'global', window, 60)).toBe(1);
      expect(await store.hit(ENV_A, 'configuration', windowStart(-60), 60)).toBe(1);
    });

    it('never loses or repeats a count under concurrent hits', async () => {
      const window = windowStart(-240);
      const counts = await Promise.all(Array.from({ length: 25 }, () => store.hit(ENV_B, 'trigger', window, 60)));
      expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(counts.every((count) => typeof count === 'number')).toBe(true);
    });
  });
}

describe.skipIf(!(await servicesAvailable(['Redis'])))('RedisRateLimitStore', () => {
  it('counts a hit in one Redis command and keeps the counter for two windows', async () => {
    const redis = await openTestRedis();
    try {
      const store = new RedisRateLimitStore(redis.redis, redis.prefix);
      const window = windowStart();
      await store.hit(ENV_A, 'trigger', window, 60); // loads the script (EVALSHA, then EVAL on NOSCRIPT)
      const sent: string[] = [];
      const original = redis.redis.sendCommand.bind(redis.redis);
      redis.redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
        sent.push(command.name);
        return (original as (...args: unknown[]) => unknown)(command, ...rest);
      }) as typeof redis.redis.sendCommand;
      expect(await store.hit(ENV_A, 'trigger', window, 60)).toBe(2);
      expect(sent).toEqual(['evalsha']);
      const ttl = await redis.redis.ttl(`${redis.prefix}:rl:${ENV_A}:trigger:${window}`);
      expect(ttl).toBeGreaterThan(60);
      expect(ttl).toBeLessThanOrEqual(120);
      // A second store on the same connection (the API builds one per container) reuses the defined script.
      expect(await new RedisRateLimitStore(redis.redis, redis.prefix).hit(ENV_A, 'trigger', window, 60)).toBe(3);
      redis.redis.sendCommand = original;

      // Concurrent hits of one counter: the first alone, those arriving meanwhile in one script call (INCRBY) for them
      // all, each with its own count in call order; also when Redis has forgotten the script (a restart, SCRIPT FLUSH).
      await redis.redis.script('FLUSH');
      let pipelines = 0;
      const pipeline = redis.redis.pipeline.bind(redis.redis);
      redis.redis.pipeline = ((...args: unknown[]) => (pipelines++, (pipeline as (...a: unknown[]) => unknown)(...args))) as typeof redis.redis.pipeline;
      const scripts = countScriptCalls(redis.redis);
      const other = windowStart(-600);
      const counts = await Promise.all(Array.from({ length: 20 }, () => store.hit(ENV_B, 'trigger', other, 60)));
      expect(counts).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(pipelines).toBe(0);
      // The first: EVALSHA refused (NOSCRIPT), then EVAL; the other 19: one EVALSHA.
      expect(scripts.count()).toBe(3);

      // Several counters in one batch: one pipeline, one script call per counter, each hit its own counter's count.
      const mixed = await Promise.all(Array.from({ length: 21 }, (_, i) => store.hit(i % 3 === 0 ? ENV_A : ENV_B, 'global', other, 60)));
      expect(mixed).toEqual(Array.from({ length: 21 }, (_, i) => (i % 3 === 0 ? i / 3 + 1 : i - Math.floor(i / 3))));
      expect(pipelines).toBe(1);
      expect(scripts.count()).toBe(3 + 1 + 2);
      scripts.restore();
    } finally {
      await redis.close();
    }
  });
});

describe.skipIf(!(await servicesAvailable(['Redis'])))('RedisRateLimitStore across API processes', () => {
  it('gives every hit of two processes its own count of one counter, batches included', async () => {
    const [first, second] = [await openTestRedis(), await openTestRedis()];
    try {
      // Two connections as two API processes have (the prefix of the first: one shared counter).
      const stores = [new RedisRateLimitStore(first.redis, first.prefix), new RedisRateLimitStore(second.redis, first.prefix)];
      const window = windowStart(-900);
      const counts = await Promise.all(Array.from({ length: 120 }, (_, i) => stores[i % 2]!.hit(ENV_A, 'global', window, 60)));
      expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
      // Each process's own hits count up in call order.
      for (const parity of [0, 1]) {
        const own = counts.filter((_, i) => i % 2 === parity);
        expect(own).toEqual([...own].sort((a, b) => a - b));
      }
      expect(await stores[1]!.hit(ENV_A, 'global', window, 60)).toBe(121);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});

/** Counts the script calls (EVALSHA or EVAL) sent on a connection, pipelined ones included. */
function countScriptCalls(redis: TestRedis['redis']): { count(): number; restore(): void } {
  let calls = 0;
  const original = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    if (command.name === 'evalsha' || command.name === 'eval') calls++;
    return (original as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof redis.sendCommand;
  return { count: () => calls, restore: () => void (redis.sendCommand = original) };
}

describe('LocalRateLimitStore', () => {
  it('forgets windows older than the previous one when a new window starts', async () => {
    const store = new LocalRateLimitStore();
    const at = (second: number) => new Date(Date.UTC(2026, 10, 26, 0, 0, second)).toISOString();
    expect(await store.hit(ENV_A, 'trigger', at(0), 10)).toBe(1);
    expect(await store.hit(ENV_A, 'trigger', at(10), 10)).toBe(1);
    expect(await store.hit(ENV_A, 'trigger', at(20), 10)).toBe(1);
    const windows = (store as unknown as { windows: Map<string, unknown> }).windows;
    expect([...windows.keys()]).toEqual([at(10), at(20)]);
    expect(await store.hit(ENV_A, 'trigger', at(20), 10)).toBe(2);
  });
});

describe('LocalRateLimitStore, concurrent hits', () => {
  it('counts each of a burst exactly once', async () => {
    const store = new LocalRateLimitStore();
    const window = new Date(Date.UTC(2026, 10, 26, 0, 0, 0)).toISOString();
    const counts = await Promise.all(Array.from({ length: 100 }, () => store.hit(ENV_A, 'global', window, 60)));
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(await store.hit(ENV_A, 'global', window, 60)).toBe(101);
    expect(await store.hit(ENV_A, 'trigger', window, 60)).toBe(1);
  });
});
