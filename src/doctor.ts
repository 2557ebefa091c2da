import { accessSync, constants, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { sql, type Kysely } from 'kysely';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, openDatabase } from './container.js';
import { systemClock } from './domain/clock.js';
import { createProviderDirectory } from './providers/directory.js';
import { SecretBox, parseMasterKey } from './store/secret-box.js';
import { pendingMigrations } from './store/sql/migrate.js';
import type { Database } from './store/sql/schema.js';
import { SqlStore } from './store/sql/sql-store.js';
import type { Deps } from './usecases/deps.js';
import { checkIntegration } from './usecases/integrations/check-integration.js';

/**
 * `herald doctor`: checks a set-up without changing it (no migration, no key generated, nothing written but a probe
 * file in the data dir) and prints one line per check with a fix hint. Exit code 1 when a check failed; warnings
 * alone leave it 0.
 */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a warning or failure. */
  fix?: string;
}

/** How long a network check (database, Redis) may take before it counts as unreachable. */
const NETWORK_TIMEOUT_MS = 5000;
/** Clock difference with the database beyond which time-based rules (delays, expiries, leases) go wrong. */
const CLOCK_WARN_MS = 1000;
const CLOCK_FAIL_MS = 5000;

export async function runDoctor(options: { checkIntegrations?: boolean; env?: Record<string, string | undefined> } = {}): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  let config: Config;
  try {
    config = loadConfig(options.env);
    results.push({ name: 'configuration', status: 'ok', detail: config.databaseUrl ? `scale-out storage (PostgreSQL${config.redisUrl ? ' + Redis' : ''})` : 'embedded (SQLite)' });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    results.push({ name: 'configuration', status: 'fail', detail: error.message, fix: 'correct the variable named above' });
    return results;
  }
  if (config.redisUrl && !config.databaseUrl) {
    results.push({ name: 'configuration', status: 'warn', detail: 'REDIS_URL without DATABASE_URL: SQLite with the Redis queue', fix: 'set DATABASE_URL for a scaled-out deployment, or unset REDIS_URL' });
  }

  results.push(checkDataDir(config));

  let db: Kysely<Database> | undefined;
  const dialect = config.databaseUrl ? 'postgres' : 'sqlite';
  const sqliteFile = join(config.dataDir, 'herald.sqlite');
  if (!config.databaseUrl && !existsSync(sqliteFile)) {
    results.push({ name: 'database', status: 'warn', detail: `no database yet at ${sqliteFile}`, fix: 'run "herald start" (or "herald migrate") to create it' });
  } else {
    try {
      db = await withTimeout(openAndPing(config), NETWORK_TIMEOUT_MS, 'no answer');
      results.push({ name: 'database', status: 'ok', detail: config.databaseUrl ? `PostgreSQL reachable (${redactUrl(config.databaseUrl)})` : `SQLite at ${sqliteFile}` });
    } catch (error) {
      results.push({
        name: 'database',
        status: 'fail',
        detail: `unreachable: ${messageOf(error)}`,
        fix: config.databaseUrl ? 'check DATABASE_URL (host, port, user, database) and that PostgreSQL is running' : `check that ${sqliteFile} is a Herald SQLite file and readable`,
      });
    }
  }

  if (db) {
    try {
      const pending = await pendingMigrations(db, dialect);
      results.push(
        pending.length === 0
          ? { name: 'migrations', status: 'ok', detail: 'schema is up to date' }
          : { name: 'migrations', status: 'fail', detail: `${pending.length} pending: ${pending.join(', ')}`, fix: 'run "herald migrate" (herald start migrates by itself)' },
      );
    } catch (error) {
      results.push({ name: 'migrations', status: 'fail', detail: messageOf(error), fix: 'run "herald migrate"' });
    }
  }

  results.push(await checkRedis(config));

  const key = readMasterKey(config);
  results.push(await checkEncryptionKey(config, key, db));
  results.push(checkOutbound(config));
  results.push(await checkClock(db, dialect));

  if (options.checkIntegrations) {
    if (!db || key.kind !== 'found') {
      results.push({ name: 'integrations', status: 'skip', detail: 'needs a reachable database and the encryption key' });
    } else {
      results.push(...(await checkIntegrations(config, db, dialect, key.key)));
    }
  }
  await db?.destroy();
  return results;
}

async function openAndPing(config: Config): Promise<Kysely<Database>> {
  const db = await openDatabase(config);
  try {
    await sql`select 1`.execute(db);
    return db;
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw error;
  }
}

function checkDataDir(config: Config): CheckResult {
  const dir = config.dataDir;
  const needed = !config.databaseUrl || !config.encryptionKey;
  try {
    if (!existsSync(dir)) {
      if (!needed) return { name: 'data dir', status: 'ok', detail: `${dir} not used (PostgreSQL and HERALD_ENCRYPTION_KEY are set)` };
      // Created on the first start: its nearest existing parent must let Herald do that.
      let parent = dirname(dir);
      while (!existsSync(parent) && parent !== dirname(parent)) parent = dirname(parent);
      accessSync(parent, constants.W_OK | constants.X_OK);
      return { name: 'data dir', status: 'ok', detail: `${dir} does not exist yet; it will be created in ${parent}` };
    }
    if (!statSync(dir).isDirectory()) return { name: 'data dir', status: 'fail', detail: `${dir} is not a directory`, fix: 'point HERALD_DATA_DIR at a directory' };
    accessSync(dir, constants.R_OK | constants.W_OK | constants.X_OK);
    // access() trusts the mode bits; a read-only mount or a full disk shows only on a real write.
    const probe = join(dir, `.herald-doctor-${process.pid}`);
    writeFileSync(probe, 'probe');
    rmSync(probe);
    return { name: 'data dir', status: 'ok', detail: `${dir} is writable` };
  } catch (error) {
    return {
      name: 'data dir',
      status: needed ? 'fail' : 'warn',
      detail: `${dir} is not writable: ${messageOf(error)}`,
      fix: `give the user running Herald write access (e.g. chown -R <user> ${dir}; chmod 700 ${dir}) or set HERALD_DATA_DIR`,
    };
  }
}

async function checkRedis(config: Config): Promise<CheckResult> {
  if (!config.redisUrl) return { name: 'redis', status: 'skip', detail: 'REDIS_URL not set (in-process SQL queue)' };
  const { openRedis, waitUntilReady } = await import('./store/redis/connection.js');
  const redis = openRedis(config.redisUrl, 'command');
  try {
    await waitUntilReady(redis, NETWORK_TIMEOUT_MS);
    await redis.ping();
    return { name: 'redis', status: 'ok', detail: `reachable (${redactUrl(config.redisUrl)})` };
  } catch (error) {
    return { name: 'redis', status: 'fail', detail: `unreachable: ${messageOf(error)}`, fix: 'check REDIS_URL and that Redis is running' };
  } finally {
    redis.disconnect();
  }
}

type MasterKey = { kind: 'found'; key: Buffer; source: string } | { kind: 'missing' } | { kind: 'invalid'; source: string; reason: string };

/** The master key as a server would load it, but never generated here. */
function readMasterKey(config: Config): MasterKey {
  const source = config.encryptionKey ? 'HERALD_ENCRYPTION_KEY' : join(config.dataDir, 'encryption.key');
  try {
    if (config.encryptionKey) return { kind: 'found', key: parseMasterKey(config.encryptionKey), source };
    if (!existsSync(source)) return { kind: 'missing' };
    return { kind: 'found', key: parseMasterKey(readFileSync(source, 'utf8')), source };
  } catch (error) {
    return { kind: 'invalid', source, reason: messageOf(error) };
  }
}

async function checkEncryptionKey(config: Config, key: MasterKey, db: Kysely<Database> | undefined): Promise<CheckResult> {
  const name = 'encryption key';
  if (key.kind === 'invalid') return { name, status: 'fail', detail: `${key.source}: ${key.reason}`, fix: 'the key is 64 hex characters or the base64 of 32 bytes' };
  const stored = db ? await db.selectFrom('integrations').select(['id', 'credentials_enc']).execute().catch(() => []) : [];
  if (key.kind === 'missing') {
    return stored.length > 0
      ? { name, status: 'fail', detail: `no key, but ${stored.length} stored secrets`, fix: 'set HERALD_ENCRYPTION_KEY to the key they were written with (or restore encryption.key into the data dir)' }
      : { name, status: 'warn', detail: 'no key yet: generated into the data dir on the first start', fix: 'set HERALD_ENCRYPTION_KEY in production and keep a copy with your backups' };
  }
  const box = new SecretBox(key.key);
  const unreadable = stored.filter((row) => {
    try {
      box.decrypt(row.credentials_enc);
      return false;
    } catch {
      return true;
    }
  });
  if (unreadable.length > 0) {
    return {
      name,
      status: 'fail',
      detail: `${unreadable.length} of ${stored.length} stored integration credentials do not decrypt with the key from ${key.source} (e.g. integration ${unreadable[0]!.id})`,
      fix: 'use the key the secrets were written with (HERALD_ENCRYPTION_KEY or the data dir\'s encryption.key)',
    };
  }
  let modeNote = '';
  if (!config.encryptionKey) {
    const mode = statSync(key.source).mode & 0o077;
    if (mode !== 0) return { name, status: 'warn', detail: `${key.source} is readable by other users`, fix: `chmod 600 ${key.source}` };
    modeNote = ', file mode 600';
  }
  return { name, status: 'ok', detail: `${key.source} decrypts all ${stored.length} stored integration credentials${modeNote}` };
}

/** Each HERALD_OUTBOUND_ALLOW entry must be a host name, an IP address or a CIDR, optionally with :port. */
function checkOutbound(config: Config): CheckResult {
  const name = 'outbound guard';
  const allow = config.outbound.allow;
  if (allow.length === 0) return { name, status: 'ok', detail: 'private and internal addresses refused for every provider call (HERALD_OUTBOUND_ALLOW empty)' };
  const bad = allow.filter((entry) => !validAllowEntry(entry));
  if (bad.length > 0) return { name, status: 'fail', detail: `HERALD_OUTBOUND_ALLOW has entries that are not a host, IP or CIDR: ${bad.join(', ')}`, fix: 'use entries like smtp.internal, 10.0.0.5, 10.0.0.0/24 or mail.local:2525' };
  const wide = allow.filter((entry) => /\/(0|[1-7])$/.test(entry));
  if (wide.length > 0) return { name, status: 'warn', detail: `HERALD_OUTBOUND_ALLOW opens very wide ranges: ${wide.join(', ')}`, fix: 'allow only the hosts your providers need' };
  return { name, status: 'ok', detail: `private addresses refused except ${allow.join(', ')}` };
}

function validAllowEntry(entry: string): boolean {
  const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
  if (cidr) {
    const version = isIP(cidr[1]!);
    return version !== 0 && Number(cidr[2]) <= (version === 4 ? 32 : 128);
  }
  if (isIP(entry) !== 0) return true;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return isIP(bracketed[1]!) === 6;
  const [host, port, extra] = entry.split(':');
  if (extra !== undefined || (port !== undefined && !/^\d{1,5}$/.test(port))) return false;
  return isIP(host!) !== 0 || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(host!);
}

async function checkClock(db: Kysely<Database> | undefined, dialect: 'sqlite' | 'postgres'): Promise<CheckResult> {
  const name = 'clock';
  if (!db) return { name, status: 'skip', detail: 'no database to compare with' };
  if (dialect === 'sqlite') return { name, status: 'ok', detail: `the embedded database uses this machine's clock (${new Date().toISOString()})` };
  const before = Date.now();
  const { rows } = await sql<{ now: Date | string }>`select now() as now`.execute(db);
  const after = Date.now();
  const databaseMs = new Date(rows[0]!.now).getTime();
  const skew = databaseMs - (before + after) / 2;
  const detail = `${Math.abs(Math.round(skew))} ms ${skew >= 0 ? 'behind' : 'ahead of'} the database`;
  if (Math.abs(skew) > CLOCK_FAIL_MS) return { name, status: 'fail', detail, fix: 'synchronise this machine\'s clock (NTP): delays, expiries and idempotency leases compare times across processes' };
  if (Math.abs(skew) > CLOCK_WARN_MS) return { name, status: 'warn', detail, fix: 'synchronise the clocks with NTP' };
  return { name, status: 'ok', detail };
}

async function checkIntegrations(config: Config, db: Kysely<Database>, dialect: 'sqlite' | 'postgres', key: Buffer): Promise<CheckResult[]> {
  const store = new SqlStore(db, { dialect, secretBox: new SecretBox(key) });
  const logger = createLogger({ ...config, logLevel: 'silent' });
  const deps = { config, clock: systemClock, logger, providers: createProviderDirectory(config) } as unknown as Deps;
  const results: CheckResult[] = [];
  for (const environment of await store.tenancy.listEnvironments()) {
    for (const integration of await store.integrations.list(environment._id, { activeOnly: true })) {
      const name = `integration ${environment.name}/${integration.identifier}`;
      try {
        await checkIntegration(deps, { providerId: integration.providerId, channel: integration.channel, credentials: integration.credentials ?? {} });
        results.push({ name, status: 'ok', detail: `${integration.providerId}: live check passed (or the provider has none)` });
      } catch (error) {
        results.push({ name, status: 'fail', detail: `${integration.providerId}: ${messageOf(error)}`, fix: 'update the credentials in the dashboard or with PUT /v1/integrations/{id}' });
      }
    }
  }
  if (results.length === 0) results.push({ name: 'integrations', status: 'ok', detail: 'no active integrations' });
  return results;
}

/** One line per check: status, name, detail, and the fix after an arrow. */
export function formatCheck(result: CheckResult): string {
  const label = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' }[result.status];
  return `${label}  ${result.name.padEnd(16)} ${result.detail}${result.fix && (result.status === 'fail' || result.status === 'warn') ? `  → fix: ${result.fix}` : ''}`;
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'unparsable URL';
  }
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0]);
  const text = error instanceof Error ? error.message || error.constructor.name : String(error);
  return text.split('\n')[0]!;
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}
