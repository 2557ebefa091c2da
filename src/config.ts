import { resolve } from 'node:path';

/**
 * The only reader of process.env. Parsed once at start-up into a typed object; a bad value fails the
 * start with a message naming the variable. Zero configuration gives a working embedded server.
 */
export interface RateLimitConfig {
  enabled: boolean;
  /** Window length in seconds; limits below are per environment per window. */
  windowSeconds: number;
  trigger: number;
  configuration: number;
  global: number;
}

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** PostgreSQL connection string; SQLite under dataDir when absent. */
  databaseUrl?: string;
  /** PostgreSQL connections per process. */
  databasePoolSize: number;
  /** Embedded: ms between WAL checkpoints on a thread of their own; 0 leaves them in the committing call. */
  sqliteCheckpointMs: number;
  /**
   * Embedded: threads that read and write the list pages (`GET /v1/messages`, `GET /v1/notifications`) on read-only
   * connections of their own, off the event loop (src/readers/); 0 reads them on the event loop. Not used scaled out
   * (DATABASE_URL): PostgreSQL's reads are already off the event loop.
   */
  readerThreads: number;
  /** Redis connection string; the in-process SQL queue when absent. */
  redisUrl?: string;
  /** 32-byte key, base64 or hex; generated into dataDir when absent. */
  encryptionKey?: string;
  /** Becomes the development environment's key on the first start (for automation). */
  bootstrapSecretKey?: string;
  bodyLimitBytes: number;
  /** The body limit of the trigger, workflow and bridge-sync routes (http/body-limits.ts). */
  largeBodyLimitBytes: number;
  logLevel: string;
  rateLimit: RateLimitConfig;
  idempotencyTtlSeconds: number;
  /**
   * How long an in-progress Idempotency-Key claim outlives its process: the holder renews it while the request runs,
   * so only a dead holder's claim lapses and a retry may take the key over (docs/operations-runtime.md).
   */
  idempotencyLeaseMs: number;
  /** SIGTERM: how long in-flight requests and running jobs get to finish before the process exits anyway. */
  shutdownTimeoutMs: number;
  /** Log lines: `pretty` (one readable line each) or `json`; `auto` = pretty when stdout is a terminal. */
  logFormat: 'auto' | 'pretty' | 'json';
  /** Max recipients in one trigger's `to`. */
  triggerMaxRecipients: number;
  /** Max events in one bulk trigger. */
  bulkTriggerMaxEvents: number;
  worker: {
    concurrency: number;
    /** Attempts per job for retryable failures (1 = no retry). */
    jobAttempts: number;
    /** First retry delay in ms; doubles each attempt. */
    backoffMs: number;
    /** How often the SQL queue polls for due jobs when idle. */
    pollIntervalMs: number;
    /** How often the worker re-enqueues triggers still `accepted` after that long (see recoverAcceptedTriggers). */
    triggerSweepMs: number;
    /** Embedded: jobs run at once while the API is answering a burst of requests with its event loop saturated (SqlQueue.shareWith); 0 = always `concurrency`. */
    concurrencyWhileServing: number;
    /** Scale-out: the worker process's niceness (0-19; 0 = unchanged), so an API process on the same host gets the CPU first. */
    nice: number;
    /**
     * Scale-out: jobs a worker runs at once while its own thread waits for the CPU (the host is busy with something of
     * higher priority, an API's burst), so its database work gives way too (src/worker/cpu-yield.ts); 0 = never yields.
     */
    yieldConcurrency: number;
    /** The share of its runnable time the worker's thread waited for the CPU, over one sample, that counts as starved. */
    yieldThreshold: number;
    /** The yield budget (ms): yielding spends it, running all jobs earns it back; spent, all jobs until it is whole (cpu-yield.ts). */
    yieldMaxMs: number;
  };
  outbound: {
    timeoutMs: number;
    userAgent: string;
    /** Hosts, IPs or CIDRs exempt from the private-address guard (HERALD_OUTBOUND_ALLOW, comma-separated). */
    allow: string[];
  };
  providerCheckTimeoutMs: number;
  /** Default lower bound for listing events, in days; undefined = no bound. */
  activityRetentionDays?: number;
  sessionTokenMaxTtlSeconds: number;
  dashboard: DashboardConfig;
  /** A channel step outside the subscriber's delivery schedule: held until the window opens, or skipped (Novu). */
  scheduleOutsideWindow: 'defer' | 'skip';
  inbox: InboxConfig;
  /**
   * The URL clients and vendors reach this server at (HERALD_PUBLIC_URL, no trailing slash), when a proxy stands in
   * front: Twilio signs the full URL it called. Absent: built from the request's Host header.
   */
  publicUrl?: string;
  deliveryReports: {
    /** Provider delivery reports accepted per integration per rate-limit window (HERALD_RATE_LIMIT_PROVIDER_REPORTS). */
    rateLimitPerIntegration: number;
  };
  webhooks: WebhooksConfig;
  metrics: MetricsConfig;
  /** OpenTelemetry tracing; undefined (off) unless an OTLP endpoint is configured. */
  tracing?: TracingConfig;
  retention: RetentionConfig;
}

/** How long history is kept (docs/operations-data.md, "Retention"); a `Days` of undefined keeps it forever. */
export interface RetentionConfig {
  /** Notification events with their jobs, execution details and trigger records (HERALD_RETENTION_DAYS). */
  eventDays?: number;
  /** Messages of every channel, the Inbox's included (HERALD_MESSAGE_RETENTION_DAYS). */
  messageDays?: number;
  /** How often a worker sweeps; the first sweep runs a minute after start (or sooner when this is shorter). */
  sweepIntervalMs: number;
  /** Rows deleted per short transaction. */
  batchSize: number;
  /** Least pause between two batches; a slow batch pauses longer (see usecases/retention/sweep-retention.ts). */
  pauseMs: number;
}

/** `GET /metrics` (docs/operations-observability.md). */
export interface MetricsConfig {
  /** HERALD_METRICS=off removes the route and every recorder (for measuring their cost). */
  enabled: boolean;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token?: string;
  /** The scale-out worker's metrics port (it has no HTTP server otherwise); undefined = no endpoint; 0 = any free port. */
  workerPort?: number;
}

/** From the standard OTEL_* variables; the SDK may read more of them itself (sampler, limits). */
export interface TracingConfig {
  /** The full URL spans are POSTed to (…/v1/traces). */
  url: string;
  protocol: 'http/json' | 'http/protobuf';
  headers: Record<string, string>;
  serviceName: string;
  /** How long spans are batched before an export (OTEL_BSP_SCHEDULE_DELAY). */
  batchDelayMs: number;
}

/** Outbound webhooks (docs/webhooks.md). */
export interface WebhooksConfig {
  /** Delay before each attempt of an event: the first is the first attempt's (0 = at once), then one per retry. */
  retryDelaysMs: number[];
  /** An endpoint whose every attempt failed for this long is disabled. */
  disableAfterMs: number;
  /** Per attempt: the receiver must answer within this. */
  timeoutMs: number;
  /** How long a process trusts its "this environment has (no) endpoints" answer (endpoint changes drop it at once). */
  presenceCacheMs: number;
  /** How often the worker looks for new events to fan out when none woke it. */
  relayIntervalMs: number;
  /** How often the worker re-enqueues attempts overdue by `overdueMs` (a job lost between a commit and its enqueue). */
  sweepIntervalMs: number;
  overdueMs: number;
  /** Events and finished attempts are deleted after this many days (the attempt log and `recover` reach that far). */
  retentionDays: number;
}

/** The Inbox (`/v1/inbox/*`, the browser clients @novu/js and <Inbox />). */
export interface InboxConfig {
  /** Lifetime of a subscriber session token from `POST /v1/inbox/session`. */
  tokenTtlSeconds: number;
  /** Answered as `maxSnoozeDurationHours`; a snooze further ahead is refused (0 hides snooze in the UI). */
  maxSnoozeDurationHours: number;
  /** Origins allowed by CORS on /v1/inbox/* and /socket.io/; `['*']` = any origin. */
  allowedOrigins: string[];
  /** Requests per subscriber per rate-limit window on /v1/inbox/* (the session route excepted). */
  rateLimitPerSubscriber: number;
  /** Session requests per application identifier per rate-limit window. */
  rateLimitSessionPerApplication: number;
  /** Bytes of Inbox read answers an embedded process keeps (http/inbox-read-cache.ts); 0 turns the cache off. */
  readCacheBytes: number;
}

/** Dashboard users and sessions (README, "Dashboard: users and sessions"). */
export interface DashboardConfig {
  /** Lifetime of a sign-in (cookie session), counted from the sign-in. */
  sessionTtlSeconds: number;
  /** Lifetime of the first-start setup link. */
  setupTokenTtlSeconds: number;
  /** Lifetime of an invite link. */
  inviteTtlSeconds: number;
  /** Sign-in attempts per email address, and per client IP, in one window; then 429. */
  loginMaxAttemptsPerEmail: number;
  loginMaxAttemptsPerIp: number;
  loginWindowSeconds: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/**
 * HERALD_READER_THREADS when unset: off. On the 2-core bench machine one thread served the lists at about the same rate
 * for 3-30 % more CPU per request, with a higher p99; what it wins is isolation from slow (cold) page reads
 * (BENCHMARKS.md, session 24).
 */
export const DEFAULT_READER_THREADS = 0;

function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

/** `250`, `250ms`, `5s`, `5m`, `2h`, `5d` as milliseconds. */
function durationMs(name: string, raw: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(raw.trim());
  if (!match) throw new ConfigError(`${name} must be durations such as 500ms, 5s, 5m, 2h or 5d, got "${raw}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(match[2] ?? 'ms') as 'ms'];
  return Math.round(Number(match[1]) * unit);
}

function durations(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const values = raw.split(',').map((part) => durationMs(name, part));
  if (values.length > 50) throw new ConfigError(`${name} takes at most 50 entries`);
  return values;
}

function duration(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? fallback : durationMs(name, raw);
}

/** Days of retention: a positive integer, or `0`/`off` for none (kept forever, returned as undefined). */
export function retentionDays(env: Env, name: string, fallback: number | undefined): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (raw === '0' || raw.toLowerCase() === 'off') return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value > 36_500) {
    throw new ConfigError(`${name} must be a number of days between 1 and 36500, or 0 or "off" to keep everything, got "${raw}"`);
  }
  return value;
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw
    .split(',')
    .map((item) => item.trim().replace(/\/+$/, ''))
    .filter(Boolean);
}

/** `key=value,key2=value2` (values URL-encoded), the format of OTEL_EXPORTER_OTLP_HEADERS. */
function otlpHeaders(env: Env, name: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (env[name] ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError(`${name} must be a list of key=value pairs, got "${pair.trim()}"`);
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${name} has a badly encoded value in "${pair.trim()}"`);
    }
  }
  return headers;
}

/**
 * Tracing is on only when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, used as is, or
 * OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces) and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER turns it off.
 */
function tracingConfig(env: Env): TracingConfig | undefined {
  if (boolean(env, 'OTEL_SDK_DISABLED', false)) return undefined;
  const exporters = list(env, 'OTEL_TRACES_EXPORTER', ['otlp']);
  if (!exporters.includes('otlp')) {
    if (exporters.every((name) => name === 'none')) return undefined;
    throw new ConfigError(`OTEL_TRACES_EXPORTER: Herald exports traces over OTLP only (otlp or none), got "${exporters.join(',')}"`);
  }
  const specific = optional(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!specific && !base) return undefined;
  const url = specific ?? `${base!.replace(/\/+$/, '')}/v1/traces`;
  const urlName = specific ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  if (!URL.canParse(url) || !['http:', 'https:'].includes(new URL(url).protocol)) throw new ConfigError(`${urlName} must be an http(s) URL, got "${specific ?? base}"`);
  const protocolName = optional(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  if (env[protocolName] === 'grpc') throw new ConfigError(`${protocolName}=grpc is not supported: use http/protobuf (the default) or http/json`);
  return {
    url,
    protocol: oneOf(env, protocolName, ['http/protobuf', 'http/json'] as const, 'http/protobuf'),
    headers: { ...otlpHeaders(env, 'OTEL_EXPORTER_OTLP_HEADERS'), ...otlpHeaders(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    serviceName: optional(env, 'OTEL_SERVICE_NAME') ?? 'herald',
    batchDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 1),
  };
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const retention = optional(env, 'HERALD_ACTIVITY_RETENTION_DAYS');
  const config: Config = {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    dataDir: resolve(env.HERALD_DATA_DIR || './data'),
    databaseUrl: optional(env, 'DATABASE_URL'),
    databasePoolSize: integer(env, 'HERALD_DATABASE_POOL_SIZE', 10, 1, 1000),
    // Embedded: WAL checkpoints on a thread of their own every this many ms, off the event loop (0: in the commit, as
    // SQLite does by default). See src/store/sqlite/background-checkpoint.ts.
    sqliteCheckpointMs: integer(env, 'HERALD_SQLITE_CHECKPOINT_MS', 50, 0, 60_000),
    // Embedded: list pages read on this many threads (0: on the event loop). See src/readers/reader-pool.ts.
    readerThreads: integer(env, 'HERALD_READER_THREADS', DEFAULT_READER_THREADS, 0, 16),
    redisUrl: optional(env, 'REDIS_URL'),
    encryptionKey: optional(env, 'HERALD_ENCRYPTION_KEY'),
    bootstrapSecretKey: optional(env, 'HERALD_BOOTSTRAP_SECRET_KEY'),
    bodyLimitBytes: integer(env, 'HERALD_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    // Novu reads up to 20 MB on these routes (its body parser's '20mb'); see src/http/body-limits.ts.
    largeBodyLimitBytes: integer(env, 'HERALD_LARGE_BODY_LIMIT_BYTES', 20 * 1024 * 1024, 1024),
    logLevel: env.LOG_LEVEL || 'info',
    rateLimit: {
      enabled: boolean(env, 'HERALD_RATE_LIMIT', true),
      windowSeconds: integer(env, 'HERALD_RATE_LIMIT_WINDOW_SECONDS', 1, 1, 3600),
      trigger: integer(env, 'HERALD_RATE_LIMIT_TRIGGER', 10_000, 1),
      configuration: integer(env, 'HERALD_RATE_LIMIT_CONFIGURATION', 1_000, 1),
      global: integer(env, 'HERALD_RATE_LIMIT_GLOBAL', 10_000, 1),
    },
    idempotencyTtlSeconds: integer(env, 'HERALD_IDEMPOTENCY_TTL_SECONDS', 24 * 3600, 1),
    idempotencyLeaseMs: integer(env, 'HERALD_IDEMPOTENCY_LEASE_MS', 10_000, 1000, 3_600_000),
    shutdownTimeoutMs: integer(env, 'HERALD_SHUTDOWN_TIMEOUT_MS', 25_000, 0, 3_600_000),
    logFormat: oneOf(env, 'HERALD_LOG_FORMAT', ['auto', 'pretty', 'json'] as const, 'auto'),
    triggerMaxRecipients: integer(env, 'HERALD_TRIGGER_MAX_RECIPIENTS', 100, 1),
    bulkTriggerMaxEvents: integer(env, 'HERALD_BULK_TRIGGER_MAX_EVENTS', 100, 1),
    worker: {
      // Embedded, jobs running at once share one SQLite commit per event-loop turn: at 16 a commit carried ~8 writes and
      // commits were a third of the CPU per trigger; 32 halves the commits (`npm run bench`, BENCHMARKS.md). Beyond 32 the
      // worker starves the API during a burst.
      concurrency: integer(env, 'HERALD_WORKER_CONCURRENCY', 32, 1, 1000),
      jobAttempts: integer(env, 'HERALD_JOB_ATTEMPTS', 4, 1, 100),
      backoffMs: integer(env, 'HERALD_JOB_BACKOFF_MS', 1000, 1),
      pollIntervalMs: integer(env, 'HERALD_QUEUE_POLL_MS', 200, 1),
      triggerSweepMs: integer(env, 'HERALD_TRIGGER_SWEEP_MS', 60_000, 10),
      concurrencyWhileServing: integer(env, 'HERALD_WORKER_CONCURRENCY_WHILE_SERVING', 2, 0, 1000),
      // Scale-out: on a host it shares with an API process, the worker takes the CPU the API leaves, as the embedded
      // gate above does in one process. 19 since session 22 (more triggers accepted in 8 of 10 pairs, deliveries within
      // ~5 %; BENCHMARKS.md sessions 15 and 22). No effect on a host of its own.
      nice: integer(env, 'HERALD_WORKER_NICE', 19, 0, 19),
      yieldConcurrency: integer(env, 'HERALD_WORKER_YIELD_CONCURRENCY', 2, 0, 1000),
      yieldThreshold: integer(env, 'HERALD_WORKER_YIELD_THRESHOLD_PERCENT', 50, 1, 100) / 100,
      yieldMaxMs: integer(env, 'HERALD_WORKER_YIELD_MAX_MS', 30_000, 100, 3_600_000),
    },
    outbound: {
      timeoutMs: integer(env, 'HERALD_OUTBOUND_TIMEOUT_MS', 10_000, 1),
      userAgent: env.HERALD_USER_AGENT || 'Herald/0.1 (+self-hosted notification service)',
      allow: (env.HERALD_OUTBOUND_ALLOW || '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    },
    providerCheckTimeoutMs: integer(env, 'HERALD_PROVIDER_CHECK_TIMEOUT_MS', 10_000, 1),
    activityRetentionDays: retention === undefined ? undefined : integer(env, 'HERALD_ACTIVITY_RETENTION_DAYS', 0, 1),
    sessionTokenMaxTtlSeconds: integer(env, 'HERALD_SESSION_TOKEN_MAX_TTL_SECONDS', 30 * 24 * 3600, 60),
    scheduleOutsideWindow: oneOf(env, 'HERALD_SCHEDULE_OUTSIDE_WINDOW', ['defer', 'skip'] as const, 'defer'),
    inbox: {
      // The clients have no token refresh (a page keeps its token for its whole life): a day outlives a working
      // session; a page open longer re-posts the session on reload.
      tokenTtlSeconds: integer(env, 'HERALD_INBOX_TOKEN_TTL_SECONDS', 24 * 3600, 60, 365 * 24 * 3600),
      maxSnoozeDurationHours: integer(env, 'HERALD_INBOX_MAX_SNOOZE_HOURS', 720, 0, 100 * 365 * 24),
      allowedOrigins: list(env, 'HERALD_INBOX_ALLOWED_ORIGINS', ['*']),
      rateLimitPerSubscriber: integer(env, 'HERALD_RATE_LIMIT_INBOX', 100, 1),
      rateLimitSessionPerApplication: integer(env, 'HERALD_RATE_LIMIT_INBOX_SESSION', 100, 1),
      readCacheBytes: integer(env, 'HERALD_INBOX_READ_CACHE_MB', 16, 0, 4096) * 1024 * 1024,
    },
    publicUrl: publicUrlOf(env),
    deliveryReports: {
      // Vendors send bursts (SendGrid batches, SES at sending rate); a window's worth of a busy sender fits.
      rateLimitPerIntegration: integer(env, 'HERALD_RATE_LIMIT_PROVIDER_REPORTS', 1_000, 1),
    },
    webhooks: {
      // Standard Webhooks / Svix: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
      retryDelaysMs: durations(env, 'HERALD_WEBHOOK_RETRY_SCHEDULE', [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]),
      disableAfterMs: duration(env, 'HERALD_WEBHOOK_DISABLE_AFTER', 5 * 86_400_000),
      timeoutMs: integer(env, 'HERALD_WEBHOOK_TIMEOUT_MS', 15_000, 1),
      presenceCacheMs: integer(env, 'HERALD_WEBHOOK_PRESENCE_CACHE_MS', 1_000, 0),
      relayIntervalMs: integer(env, 'HERALD_WEBHOOK_RELAY_MS', 200, 1),
      sweepIntervalMs: integer(env, 'HERALD_WEBHOOK_SWEEP_MS', 30_000, 10),
      overdueMs: integer(env, 'HERALD_WEBHOOK_OVERDUE_MS', 60_000, 0),
      retentionDays: integer(env, 'HERALD_WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
    },
    retention: {
      // Novu's hosted plans keep about 30 days of activity; messages are what subscribers see in their Inbox, which
      // people expect to scroll further back in, so they are kept longer (docs/operations-data.md).
      eventDays: retentionDays(env, 'HERALD_RETENTION_DAYS', 30),
      messageDays: retentionDays(env, 'HERALD_MESSAGE_RETENTION_DAYS', 90),
      sweepIntervalMs: integer(env, 'HERALD_RETENTION_SWEEP_INTERVAL_SECONDS', 3600, 1, 7 * 24 * 3600) * 1000,
      batchSize: integer(env, 'HERALD_RETENTION_BATCH_SIZE', 500, 1, 10_000),
      pauseMs: integer(env, 'HERALD_RETENTION_PAUSE_MS', 50, 0, 60_000),
    },
    dashboard: {
      sessionTtlSeconds: integer(env, 'HERALD_DASHBOARD_SESSION_TTL_SECONDS', 12 * 3600, 60, 365 * 24 * 3600),
      setupTokenTtlSeconds: integer(env, 'HERALD_DASHBOARD_SETUP_TOKEN_TTL_SECONDS', 24 * 3600, 60),
      inviteTtlSeconds: integer(env, 'HERALD_DASHBOARD_INVITE_TTL_SECONDS', 7 * 24 * 3600, 60),
      loginMaxAttemptsPerEmail: integer(env, 'HERALD_LOGIN_MAX_ATTEMPTS_PER_EMAIL', 10, 1),
      loginMaxAttemptsPerIp: integer(env, 'HERALD_LOGIN_MAX_ATTEMPTS_PER_IP', 100, 1),
      loginWindowSeconds: integer(env, 'HERALD_LOGIN_WINDOW_SECONDS', 900, 1, 24 * 3600),
    },
    metrics: {
      enabled: boolean(env, 'HERALD_METRICS', true),
      token: optional(env, 'HERALD_METRICS_TOKEN'),
      workerPort: optional(env, 'HERALD_METRICS_PORT') === undefined ? undefined : integer(env, 'HERALD_METRICS_PORT', 0, 0, 65535),
    },
    tracing: tracingConfig(env),
  };
  return { ...config, ...overrides };
}

function publicUrlOf(env: Env): string | undefined {
  const raw = optional(env, 'HERALD_PUBLIC_URL');
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`HERALD_PUBLIC_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`HERALD_PUBLIC_URL must be an absolute http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}
