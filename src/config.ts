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
  /** Redis connection string; the in-process SQL queue when absent. */
  redisUrl?: string;
  /** 32-byte key, base64 or hex; generated into dataDir when absent. */
  encryptionKey?: string;
  /** Becomes the development environment's key on the first start (for automation). */
  bootstrapSecretKey?: string;
  bodyLimitBytes: number;
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

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  return raw
    .split(',')
    .map((item) => item.trim().replace(/\/+$/, ''))
    .filter(Boolean);
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const retention = optional(env, 'HERALD_ACTIVITY_RETENTION_DAYS');
  const config: Config = {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    dataDir: resolve(env.HERALD_DATA_DIR || './data'),
    databaseUrl: optional(env, 'DATABASE_URL'),
    databasePoolSize: integer(env, 'HERALD_DATABASE_POOL_SIZE', 10, 1, 1000),
    redisUrl: optional(env, 'REDIS_URL'),
    encryptionKey: optional(env, 'HERALD_ENCRYPTION_KEY'),
    bootstrapSecretKey: optional(env, 'HERALD_BOOTSTRAP_SECRET_KEY'),
    bodyLimitBytes: integer(env, 'HERALD_BODY_LIMIT_BYTES', 1024 * 1024, 1024),
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
    dashboard: {
      sessionTtlSeconds: integer(env, 'HERALD_DASHBOARD_SESSION_TTL_SECONDS', 12 * 3600, 60, 365 * 24 * 3600),
      setupTokenTtlSeconds: integer(env, 'HERALD_DASHBOARD_SETUP_TOKEN_TTL_SECONDS', 24 * 3600, 60),
      inviteTtlSeconds: integer(env, 'HERALD_DASHBOARD_INVITE_TTL_SECONDS', 7 * 24 * 3600, 60),
      loginMaxAttemptsPerEmail: integer(env, 'HERALD_LOGIN_MAX_ATTEMPTS_PER_EMAIL', 10, 1),
      loginMaxAttemptsPerIp: integer(env, 'HERALD_LOGIN_MAX_ATTEMPTS_PER_IP', 100, 1),
      loginWindowSeconds: integer(env, 'HERALD_LOGIN_WINDOW_SECONDS', 900, 1, 24 * 3600),
    },
  };
  return { ...config, ...overrides };
}
