import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { gatheredStdoutLines, prettyDestination, usePrettyLogs } from './logging.js';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import { systemClock, type Clock } from './domain/clock.js';
import type { Deps, Logger } from './usecases/deps.js';
import { SecretBox, parseMasterKey } from './store/secret-box.js';
import { keepTemporaryFilesInMemory, openSqlite, SQLITE_FILE } from './store/sqlite/connection.js';
import { migrateToLatest } from './store/sql/migrate.js';
import type { Database } from './store/sql/schema.js';
import { SqlStore } from './store/sql/sql-store.js';
import { SqlIdempotencyStore } from './store/sql/idempotency-store.js';
import { EncryptedIdempotencyStore } from './store/encrypted-idempotency-store.js';
import { WorkflowCache } from './store/sql/workflow-cache.js';
import { messageListText, messageListTextHoldingDocument } from './http/message-page-serializer.js';
import { LocalRateLimitStore } from './store/local-rate-limit-store.js';
import { SqlRateLimitStore } from './store/sql/rate-limit-store.js';
import { createProviderDirectory } from './providers/directory.js';
import { createDeliveryReportDirectory } from './providers/reports/directory.js';
import { createBridgeClient } from './bridge/client.js';
import { SqlQueue } from './queue/sql-queue.js';
import type { JobQueue } from './queue/ports.js';
import type { IdempotencyStore, KeyRevocations, RateLimitStore } from './store/ports.js';
import { LocalRealtimeHub } from './realtime/local-hub.js';
import { LocalKeyRevocations } from './store/local-key-revocations.js';
import { workflowCacheListener } from './usecases/workflows/announce-workflows-changed.js';
import { forgetCachedApiKey } from './usecases/auth/authenticate-caller.js';
import { forgetSubscriberTokens, parseSubscriberRevocation } from './usecases/auth/subscriber-tokens.js';
import { socketIoKey, type RealtimeFanout } from './realtime/fanout.js';
import type { RealtimeNotifier } from './realtime/ports.js';
import { createWebhookSender } from './webhooks/http-sender.js';
import { WebhookPresence } from './store/sql/webhook-repository.js';
import { webhookPresenceListener } from './usecases/webhooks/announce-endpoints-changed.js';
import type { Metrics, Tracing } from './observability/ports.js';
import { noopMetrics, noopTracing } from './observability/noop.js';
import { serializeNotificationEvent } from './http/notification-page-serializer.js';
import { ReaderPool, type PageReaders } from './readers/reader-pool.js';

/** A backstop only: announcements drop cached workflows at once. */
const WORKFLOW_CACHE_TTL_MS = 60_000;

/**
 * Builds the dependencies from config: the only place that picks implementations (SQLite or
 * PostgreSQL, in-process queue or BullMQ). Everything it opens is closed by `close()`.
 * The scale-out implementations (pg, ioredis, BullMQ, the socket.io Redis emitter) are imported only when configured:
 * an embedded process does not load them (they were ~10 MB of its heap).
 */
export interface Container {
  deps: Deps;
  db: Kysely<Database>;
  secretBox: SecretBox;
  /** How Inbox events reach sockets: what an API process's socket server attaches to (buildApp's `realtime`). */
  realtime: RealtimeFanout;
  /** Embedded with HERALD_READER_THREADS > 0: the threads that read the list pages (buildApp's `readers`). */
  readers?: PageReaders;
  close(): Promise<void>;
}

export interface ContainerOptions {
  clock?: Clock;
  logger?: Logger;
  /** Skip migrations (the scale-out API/worker expects `herald migrate` to have run; embedded migrates). */
  migrate?: boolean;
  /**
   * PostgreSQL results that arrive in one event-loop turn continue together after it (store/postgres/
   * result-gathering.ts): set by `herald api`, whose requests each wait for one.
   */
  gatherQueryResults?: boolean;
  /**
   * Prefix of every Redis key (BullMQ queue, idempotency keys, rate-limit counters) when `redisUrl`
   * is set, so several Herald instances (or test files) can share one Redis. Default `herald`.
   */
  redisPrefix?: string;
  /**
   * Metrics to record into instead of the ones config.metrics selects (used only when metrics are on): a test's or a
   * benchmark's own recorder (bench:metrics switches recording on and off inside one process).
   */
  metrics?: Metrics;
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

export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>, destination?: pino.DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', '*.credentials', '*.secretKey', '*.apiKey', '*.password'], censor: '[redacted]' },
  };
  // Readable lines at a terminal or with HERALD_LOG_FORMAT=pretty (logging.ts); JSON lines otherwise, gathered into
  // few writes under load (gatheredStdoutLines). Tests pass their own destination.
  return pino(options, destination ?? (usePrettyLogs(config.logFormat) ? prettyDestination() : gatheredStdoutLines())) as unknown as Logger;
}

/** The configured database alone: PostgreSQL when DATABASE_URL is set, else the embedded SQLite file. */
export async function openDatabase(
  config: Config,
  options: { logger?: Logger; backgroundCheckpoints?: boolean; gatherResults?: boolean } = {},
): Promise<Kysely<Database>> {
  // Only a serving process checkpoints on a thread: a one-shot command's few writes are checkpointed when it closes.
  if (!config.databaseUrl) {
    return openSqlite(config.dataDir, undefined, { checkpointIntervalMs: options.backgroundCheckpoints ? config.sqliteCheckpointMs : 0, logger: options.logger });
  }
  const { openPostgres } = await import('./store/postgres/connection.js');
  return openPostgres(config.databaseUrl, config.databasePoolSize, { gatherResults: options.gatherResults });
}

/**
 * The store alone over the configured database, migrated: for CLI commands that must work next to a running server
 * (`herald users ...`) without opening Redis or a queue.
 */
export async function openDatabaseOnly(
  config: Config,
  clock: Clock = systemClock,
): Promise<{ deps: Pick<Deps, 'store' | 'clock' | 'config'>; close(): Promise<void> }> {
  const dialect = config.databaseUrl ? 'postgres' : 'sqlite';
  const db = await openDatabase(config);
  try {
    await migrateToLatest(db, dialect);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const store = new SqlStore(db, { dialect, secretBox: new SecretBox(loadMasterKey(config)), messageText: messageListText, messageTextHoldingDocument: messageListTextHoldingDocument });
  return { deps: { store, clock, config }, close: () => db.destroy() };
}

export async function createContainer(config: Config, options: ContainerOptions = {}): Promise<Container> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config);
  const secretBox = new SecretBox(loadMasterKey(config));
  const dialect = config.databaseUrl ? 'postgres' : 'sqlite';
  const db = await openDatabase(config, { logger, backgroundCheckpoints: true, gatherResults: options.gatherQueryResults });
  if (options.migrate ?? true) await migrateToLatest(db, dialect);
  if (dialect === 'sqlite') keepTemporaryFilesInMemory(db);

  // Trusted only while this process hears endpoint changes (keyRevocations.listening), set once deps exist.
  let presenceTrusted = () => true;
  const webhookPresence = new WebhookPresence(config.webhooks.presenceCacheMs, () => presenceTrusted());
  const remote = config.redisUrl ? await openRemoteServices(config, config.redisUrl, logger, options.redisPrefix ?? 'herald') : undefined;
  // Workflows cached per process (issue 24). Scale-out: dropped in every process by announcements, trusted while this
  // process hears them. Embedded SQLite: this process makes every workflow write, so its own writes' drops suffice.
  const workflowCache = remote
    ? new WorkflowCache(WORKFLOW_CACHE_TTL_MS, () => remote.keyRevocations.listening)
    : dialect === 'sqlite'
      ? new WorkflowCache(WORKFLOW_CACHE_TTL_MS, () => true)
      : undefined;
  const store = new SqlStore(db, { dialect, secretBox, clock, webhookPresence, workflowCache, messageText: messageListText, messageTextHoldingDocument: messageListTextHoldingDocument });
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
  const { notifier, fanout } = remote ? remote.realtime : localRealtime();
  const [metrics, tracing] = await Promise.all([
    config.metrics.enabled && options.metrics ? options.metrics : openMetrics(config, db, queue, logger),
    openTracing(config),
  ]);
  const providers = createProviderDirectory(config);
  const deps: Deps = {
    config,
    clock,
    store,
    // Stored answers can hold secrets (webhook secrets, new API keys): encrypted at rest in either store.
    idempotency: new EncryptedIdempotencyStore(remote?.idempotency ?? new SqlIdempotencyStore(db), secretBox),
    // Embedded (SQLite, no Redis) there is one server process: its own memory holds the counts.
    rateLimits: remote?.rateLimits ?? (dialect === 'sqlite' ? new LocalRateLimitStore() : new SqlRateLimitStore(db, dialect)),
    sessionSecret: secretBox.sessionSecret,
    logger,
    providers,
    queue,
    realtime: notifier,
    keyRevocations: remote?.keyRevocations ?? new LocalKeyRevocations(),
    deliveryReports: createDeliveryReportDirectory(config),
    webhooks: createWebhookSender(config),
    metrics,
    tracing,
    bridge: createBridgeClient({ fetch: providers.context().fetch }),
    subscriberRevocations: remote?.subscriberRevocations ?? new LocalKeyRevocations(),
    eventListText: serializeNotificationEvent,
  };
  deps.keyRevocations.onRevoked((keyHash) => forgetCachedApiKey(store, keyHash));
  deps.keyRevocations.onRevoked(webhookPresenceListener(webhookPresence));
  if (workflowCache) deps.keyRevocations.onRevoked(workflowCacheListener(workflowCache));
  presenceTrusted = () => deps.keyRevocations.listening;
  // After the migrations: the threads open the file read-only, with its tables made.
  const readers =
    dialect === 'sqlite' && config.readerThreads > 0
      ? new ReaderPool({ file: join(config.dataDir, SQLITE_FILE), threads: config.readerThreads, clock, activityRetentionDays: config.activityRetentionDays, logger })
      : undefined;
  deps.subscriberRevocations.onRevoked((message) => forgetSubscriberTokens(deps, message === undefined ? undefined : parseSubscriberRevocation(message)?.subscriberRecordId));
  return {
    deps,
    db,
    secretBox,
    realtime: fanout,
    readers,
    async close() {
      await queue.close();
      // Before the database: a page asked meanwhile is read on the main connection.
      await readers?.close();
      await deps.keyRevocations.close();
      await deps.subscriberRevocations.close();
      remote?.redis.disconnect();
      await db.destroy();
      // Last, so the spans of everything above are exported.
      await tracing.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'spans could not be exported at shutdown'));
    },
  };
}

/**
 * Scale-out mode: BullMQ for jobs, Redis for idempotency keys and rate-limit counters, all over one
 * fail-fast command connection (workers open their own blocking one when they start consuming).
 */
async function openRemoteServices(config: Config, redisUrl: string, logger: Logger, prefix: string) {
  const [{ openRedis, waitUntilReady }, { BullMqQueue }, { RedisIdempotencyStore }, { RedisRateLimitStore }, { RedisKeyRevocations }, { RedisRealtimeNotifier }] =
    await Promise.all([
      import('./store/redis/connection.js'),
      import('./queue/bullmq-queue.js'),
      import('./store/redis/idempotency-store.js'),
      import('./store/redis/rate-limit-store.js'),
      import('./store/redis/key-revocations.js'),
      import('./realtime/redis-notifier.js'),
    ]);
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
  const key = socketIoKey(prefix);
  const realtime: { notifier: RealtimeNotifier; fanout: RealtimeFanout } = {
    notifier: new RedisRealtimeNotifier(redis, key, logger),
    fanout: {
      kind: 'redis',
      key,
      // Subscriber connections wait out a Redis outage instead of failing commands (they only listen and publish).
      openAdapterClients: () => ({ pub: openRedis(redisUrl, 'worker'), sub: openRedis(redisUrl, 'worker') }),
    },
  };
  let keyRevocations: KeyRevocations;
  let subscriberRevocations: KeyRevocations;
  try {
    keyRevocations = await RedisKeyRevocations.open(redis, redisUrl, prefix, logger);
    subscriberRevocations = await RedisKeyRevocations.open(redis, redisUrl, prefix, logger, 'subscriber-deleted').catch(async (error: unknown) => {
      await keyRevocations.close();
      throw error;
    });
  } catch (error) {
    redis.disconnect();
    throw error;
  }
  return { redis, queue, idempotency, rateLimits, realtime, keyRevocations, subscriberRevocations };
}

/** prom-client is loaded only when metrics are on (HERALD_METRICS, default on). */
async function openMetrics(config: Config, db: Kysely<Database>, queue: JobQueue, logger: Logger): Promise<Metrics> {
  if (!config.metrics.enabled) return noopMetrics;
  const { PromMetrics } = await import('./observability/metrics.js');
  // SQLite is one connection, held open for the process's life: always 1 in use, nobody waiting.
  const poolUsage = config.databaseUrl ? (await import('./store/postgres/connection.js')).poolUsage : undefined;
  return new PromMetrics({
    queue: queue.stats ? () => queue.stats!() : undefined,
    dbPool: poolUsage ? () => poolUsage(db) : () => ({ inUse: 1, waiting: 0 }),
    logger,
  });
}

/** OpenTelemetry is loaded only when an OTLP endpoint is configured (config.tracing). */
async function openTracing(config: Config): Promise<Tracing> {
  if (!config.tracing) return noopTracing;
  const { createTracing } = await import('./observability/tracing.js');
  return createTracing(config.tracing, HERALD_VERSION);
}

const HERALD_VERSION = '0.1.0';

/** Embedded: notifiers and the socket server share one process and one hub. */
function localRealtime(): { notifier: RealtimeNotifier; fanout: RealtimeFanout } {
  const hub = new LocalRealtimeHub();
  return { notifier: hub, fanout: { kind: 'local', hub } };
}
