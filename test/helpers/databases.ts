import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/sql/schema.js';
import type { SqlDialectName } from '../../src/store/sql/sql-store.js';
import { openSqlite } from '../../src/store/sqlite/connection.js';
import { openPostgres } from '../../src/store/postgres/connection.js';
import { migrateToLatest } from '../../src/store/sql/migrate.js';
import { openRedis, waitUntilReady } from '../../src/store/redis/connection.js';

/**
 * Isolated PostgreSQL schemas and Redis key prefixes for tests. Each test file gets its own schema in
 * database `test` (selected through `options=-c search_path=...` in the connection string) and its own
 * Redis prefix, so files can run in parallel against the one local PostgreSQL and Redis.
 *
 * When a service is unreachable: with CI=true the tests fail loudly (CI must exercise both modes);
 * elsewhere the tests that need it are skipped and the reason is printed once.
 */
export const TEST_POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = 'redis://127.0.0.1:6379/0';

const inCi = process.env.CI === 'true';

export type ServiceName = 'PostgreSQL' | 'Redis';

const probes = new Map<ServiceName, Promise<string | undefined>>();

/** Undefined when the service answers; otherwise why it does not. */
function unreachableReason(service: ServiceName): Promise<string | undefined> {
  let probe = probes.get(service);
  if (!probe) {
    probe = (service === 'PostgreSQL' ? probePostgres() : probeRedis()).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)) || 'unreachable',
    );
    probes.set(service, probe);
  }
  return probe;
}

async function probePostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function probeRedis(): Promise<void> {
  const client = new Redis(TEST_REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } finally {
    client.disconnect();
  }
}

/**
 * True when every named service answers. Otherwise: throws under CI=true, else prints the reason and
 * returns false so the caller can `describe.skipIf(!available)`.
 */
export async function servicesAvailable(services: ServiceName[], fallback = 'skipping the tests that need it'): Promise<boolean> {
  for (const service of services) {
    const reason = await unreachableReason(service);
    if (reason === undefined) continue;
    const message = `${service} is unreachable (${reason})`;
    if (inCi) throw new Error(`${message}: CI=true requires it (start it as .ci/run does)`);
    console.warn(`[herald tests] ${message}: ${fallback}`);
    return false;
  }
  return true;
}

export function randomSuffix(): string {
  return randomBytes(6).toString('hex');
}

export interface TestSchema {
  name: string;
  /** A connection string whose sessions use only this schema. */
  url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates an empty schema `herald_t_<random>` in database `test`. */
export async function createTestSchema(): Promise<TestSchema> {
  const name = `herald_t_${randomSuffix()}`;
  await withAdmin((client) => client.query(`create schema ${name}`));
  const url = `${TEST_POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${name}`)}`;
  return {
    name,
    url,
    async drop() {
      await withAdmin((client) => client.query(`drop schema if exists ${name} cascade`));
    },
  };
}

/**
 * Creates an empty database `herald_d_<random>` on the test server (from template0, which no one connects to) and
 * answers it as a TestSchema (its `public` schema). For plan tests that keep prepared statements across a wait:
 * every CREATE or DROP SCHEMA in a database resets the cached plans of every session of that database (PostgreSQL's
 * plan cache drops all plans on a pg_namespace change), and the other test files create and drop schemas in `test`
 * all the time. A database of its own hears none of that (a rarer reset remains: see preparedEventsDatabase).
 */
export async function createTestDatabase(): Promise<TestSchema> {
  const name = `herald_d_${randomSuffix()}`;
  await withAdmin((client) => client.query(`create database ${name} template template0`));
  return {
    name,
    url: TEST_POSTGRES_URL.replace(/\/test$/, `/${name}`),
    async drop() {
      await withAdmin((client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

export interface TestRedisPrefix {
  /** Key prefix, without a trailing colon (BullMQ and the Redis stores add their own separators). */
  prefix: string;
  url: string;
  /** Deletes every key under the prefix. */
  drop(): Promise<void>;
}

export function createTestRedisPrefix(): TestRedisPrefix {
  const prefix = `herald_t_${randomSuffix()}`;
  return {
    prefix,
    url: TEST_REDIS_URL,
    async drop() {
      const client = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: () => null });
      client.on('error', () => undefined);
      try {
        let cursor = '0';
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
          if (keys.length) await client.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      } finally {
        client.disconnect();
      }
    },
  };
}

/** True when the whole suite is asked to run against PostgreSQL + Redis (HERALD_TEST_MODE=scaleout). */
export function scaleoutModeRequested(): boolean {
  return process.env.HERALD_TEST_MODE === 'scaleout';
}

export interface ScaleoutResources {
  env: Record<string, string>;
  redisPrefix: string;
  drop(): Promise<void>;
}

/**
 * A fresh schema and Redis prefix for one test server in scale-out mode, or undefined (with the
 * reason printed) when the services are unreachable outside CI.
 */
export async function createScaleoutResources(): Promise<ScaleoutResources | undefined> {
  if (!(await servicesAvailable(['PostgreSQL', 'Redis'], 'running this server in embedded mode instead'))) return undefined;
  const schema = await createTestSchema();
  const redis = createTestRedisPrefix();
  return {
    env: { DATABASE_URL: schema.url, REDIS_URL: redis.url },
    redisPrefix: redis.prefix,
    async drop() {
      await Promise.all([schema.drop(), redis.drop()]);
    },
  };
}

/** Scale-out resources by data directory, so a restart test that reuses a data dir also reuses its schema. */
const scaleoutByDataDir = new Map<string, ScaleoutResources>();

/**
 * For startTestServer: the scale-out resources of `dataDir` (created on first use) when
 * HERALD_TEST_MODE=scaleout and the test did not choose its own DATABASE_URL/REDIS_URL; else undefined
 * (embedded mode, also the fallback outside CI when PostgreSQL or Redis is down, with the reason printed).
 */
export async function scaleoutResourcesFor(dataDir: string, env: Record<string, string>): Promise<ScaleoutResources | undefined> {
  if (!scaleoutModeRequested() || env.DATABASE_URL || env.REDIS_URL) return undefined;
  const existing = scaleoutByDataDir.get(dataDir);
  if (existing) return existing;
  const created = await createScaleoutResources();
  if (created) scaleoutByDataDir.set(dataDir, created);
  return created;
}

/** Drops the schema and Redis keys of `dataDir`'s server, if it had any. */
export async function releaseScaleoutResources(dataDir: string): Promise<void> {
  const resources = scaleoutByDataDir.get(dataDir);
  if (!resources) return;
  scaleoutByDataDir.delete(dataDir);
  await resources.drop();
}

// ---- opened, migrated databases for contract suites ----------------------------------------------------

export interface TestSqlDatabase {
  dialect: SqlDialectName;
  db: Kysely<Database>;
  /** Destroys the connection and removes the file or schema. */
  close(): Promise<void>;
}

/** A SQLite file in a fresh temp directory, migrated unless `migrate: false` (migration tests). */
export async function openTestSqlite(options: { migrate?: boolean } = {}): Promise<TestSqlDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-contract-'));
  const db = openSqlite(dir);
  if (options.migrate ?? true) await migrateToLatest(db);
  return {
    dialect: 'sqlite',
    db,
    async close() {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A PostgreSQL schema of its own, migrated unless `migrate: false` (the server must be reachable: check
 * servicesAvailable first).
 */
export async function openTestPostgres(options: { migrate?: boolean } = {}): Promise<TestSqlDatabase> {
  const schema = await createTestSchema();
  const db = openPostgres(schema.url, 4);
  if (options.migrate ?? true) await migrateToLatest(db, 'postgres');
  return {
    dialect: 'postgres',
    db,
    async close() {
      await db.destroy();
      await schema.drop();
    },
  };
}

export interface TestRedis {
  /** A fail-fast command connection, as the API side uses. */
  redis: Redis;
  prefix: string;
  url: string;
  close(): Promise<void>;
}

export async function openTestRedis(): Promise<TestRedis> {
  const keys = createTestRedisPrefix();
  const redis = openRedis(keys.url, 'command');
  await waitUntilReady(redis);
  return {
    redis,
    prefix: keys.prefix,
    url: keys.url,
    async close() {
      redis.disconnect();
      await keys.drop();
    },
  };
}
