import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimitStore } from '../../../src/store/ports.js';
import { SqlRateLimitStore } from '../../../src/store/sql/rate-limit-store.js';
import { RedisRateLimitStore } from '../../../src/store/redis/rate-limit-store.js';
import { LocalRateLimitStore } from '../../../src/store/local-rate-limit-store.js';
import { openTestPostgres, openTestRedis, openTestSqlite, servicesAvailable } from '../../helpers/databases.js';

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
