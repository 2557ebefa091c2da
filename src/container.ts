import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import { systemClock, type Clock } from './domain/clock.js';
import type { Deps, Logger } from './usecases/deps.js';
import { SecretBox, parseMasterKey } from './store/secret-box.js';
import { openSqlite } from './store/sqlite/connection.js';
import { openPostgres } from './store/postgres/connection.js';
import { migrateToLatest } from './store/sql/migrate.js';
import type { Database } from './store/sql/schema.js';
import { SqlStore } from './store/sql/sql-store.js';
import { SqlIdempotencyStore } from './store/sql/idempotency-store.js';
import { SqlRateLimitStore } from './store/sql/rate-limit-store.js';
import { createProviderDirectory } from './providers/directory.js';
import { SqlQueue } from './queue/sql-queue.js';
import { BullMqQueue } from './queue/bullmq-queue.js';
import type { JobQueue } from './queue/ports.js';
import type { IdempotencyStore, RateLimitStore } from './store/ports.js';
import { openRedis, waitUntilReady } from './store/redis/connection.js';
import { RedisIdempotencyStore } from './store/redis/idempotency-store.js';
import { RedisRateLimitStore } from './store/redis/rate-limit-store.js';

/**
 * Builds the dependencies from config: the only place that picks implementations (SQLite or
 * PostgreSQL, in-process queue or BullMQ). Everything it opens is closed by `close()`.
 */
export interface Container {
  deps: Deps;
  db: Kysely<Database>;
  secretBox: SecretBox;
  close(): Promise<void>;
}

export interface ContainerOptions {
  clock?: Clock;
  logger?: Logger;
  /** Skip migrations (the scale-out API/worker expects `herald migrate` to have run; embedded migrates). */
  migrate?: boolean;
  /**
   * Prefix of every Redis key (BullMQ queue, idempotency keys, rate-limit counters) when `redisUrl`
   * is set, so several Herald instances (or test files) can share one Redis. Default `herald`.
   */
  redisPrefix?: string;
}

/** The master key: from config, else generated once into the data directory with mode 0600. */
export function loadMasterKey(config: Config): Buffer {
  if (config.encryptionKey) return parseMasterKey(config.encryptionKey);
  const file = join(config.dataDir, 'encryption.key');
  if (existsSync(file)) return parseMasterKey(readFileSync(file, 'utf8'));
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}

export function createLogger(config: Config): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', '*.credentials', '*.secretKey', '*.apiKey', '*.password'], censor: '[redacted]' },
  }) as unknown as Logger;
}

/** The configured database alone: PostgreSQL when DATABASE_URL is set, else the embedded SQLite file. */
export function openDatabase(config: Config): Kysely<Database> {
  return config.databaseUrl ? openPostgres(config.databaseUrl, config.databasePoolSize) : openSqlite(config.dataDir);
}

export async function createContainer(config: Config, options: ContainerOptions = {}): Promise<Container> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config);
  const secretBox = new SecretBox(loadMasterKey(config));
  const dialect = config.databaseUrl ? 'postgres' : 'sqlite';
  const db = openDatabase(config);
  if (options.migrate ?? true) await migrateToLatest(db, dialect);

  const store = new SqlStore(db, { dialect, secretBox });
  const remote = config.redisUrl ? await openRemoteServices(config, config.redisUrl, logger, options.redisPrefix ?? 'herald') : undefined;
  const queue: JobQueue =
    remote?.queue ??
    new SqlQueue(db, {
      dialect,
      clock,
      logger,
      pollIntervalMs: config.worker.pollIntervalMs,
      defaultAttempts: config.worker.jobAttempts,
      backoffMs: config.worker.backoffMs,
    });
  const deps: Deps = {
    config,
    clock,
    store,
    idempotency: remote?.idempotency ?? new SqlIdempotencyStore(db),
    rateLimits: remote?.rateLimits ?? new SqlRateLimitStore(db, dialect),
    sessionSecret: secretBox.sessionSecret,
    logger,
    providers: createProviderDirectory(config),
    queue,
  };
  return {
    deps,
    db,
    secretBox,
    async close() {
      await queue.close();
      remote?.redis.disconnect();
      await db.destroy();
    },
  };
}

/**
 * Scale-out mode: BullMQ for jobs, Redis for idempotency keys and rate-limit counters, all over one
 * fail-fast command connection (workers open their own blocking one when they start consuming).
 */
async function openRemoteServices(config: Config, redisUrl: string, logger: Logger, prefix: string) {
  const redis = openRedis(redisUrl, 'command');
  try {
    await waitUntilReady(redis);
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  const queue = new BullMqQueue({
    redisUrl,
    prefix,
    logger,
    connection: redis,
    defaultAttempts: config.worker.jobAttempts,
    backoffMs: config.worker.backoffMs,
  });
  const idempotency: IdempotencyStore = new RedisIdempotencyStore(redis, prefix);
  const rateLimits: RateLimitStore = new RedisRateLimitStore(redis, prefix);
  return { redis, queue, idempotency, rateLimits };
}
