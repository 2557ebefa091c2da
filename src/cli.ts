import { Command } from 'commander';
import { loadConfig } from './config.js';
import { createContainer, openDatabase } from './container.js';
import { startServer } from './main.js';
import { startApi } from './main-api.js';
import { startWorker } from './main-worker.js';
import { createApiKey } from './usecases/auth/api-keys.js';
import { createSessionToken } from './usecases/auth/session-tokens.js';
import { bootstrapTenancy } from './usecases/tenancy/bootstrap-tenancy.js';
import { migrateToLatest } from './store/sql/migrate.js';
import { createUser } from './usecases/dashboard/create-user.js';
import { resetPassword } from './usecases/dashboard/reset-password.js';
import { openDatabaseOnly } from './container.js';
import { USER_ROLES, type UserRole } from './domain/types.js';

/** herald start | api | worker | migrate | keys create | token create */
const program = new Command().name('herald').description('Self-hosted notification service');

program
  .command('start', { isDefault: true })
  .description('API and worker in one process (embedded SQLite unless DATABASE_URL is set)')
  .action(async () => {
    const config = loadConfig();
    const server = await startServer(config);
    stopOnSignals(() => server.stop(), config.shutdownTimeoutMs);
  });

/**
 * SIGTERM/SIGINT run `stop` once (drain within the shutdown timeout, close), then exit 0. A stop that hangs past the
 * timeout and a margin exits 1; a second signal ends the process at once (the default action, `once`).
 */
function stopOnSignals(stop: () => Promise<void>, timeoutMs: number): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        console.error(`shutdown did not finish within ${timeoutMs + 5000} ms; exiting`);
        process.exit(1);
      }, timeoutMs + 5000).unref();
      stop().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(error instanceof Error ? error.message : error);
          process.exit(1);
        },
      );
    });
  }
}

program
  .command('api')
  .description('Scale-out API process: HTTP only (needs DATABASE_URL and REDIS_URL; run "herald migrate" first)')
  .action(async () => {
    const config = loadConfig();
    const api = await startApi(config);
    stopOnSignals(() => api.stop(), config.shutdownTimeoutMs);
  });

program
  .command('worker')
  .description('Scale-out worker process: runs jobs, no HTTP (needs DATABASE_URL and REDIS_URL)')
  .action(async () => {
    const config = loadConfig();
    const worker = await startWorker(config);
    stopOnSignals(() => worker.stop(), config.shutdownTimeoutMs);
  });

program
  .command('migrate')
  .description('Bring the database schema up to date, then exit')
  .action(async () => {
    const config = loadConfig();
    // The database only: migrating must not need Redis (nor connect to it) when REDIS_URL is set.
    const db = await openDatabase(config);
    try {
      const applied = await migrateToLatest(db, config.databaseUrl ? 'postgres' : 'sqlite');
      console.log(applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
    } finally {
      await db.destroy();
    }
  });

program
  .command('doctor')
  .description('Check the set-up (configuration, data dir, database, migrations, Redis, encryption key, outbound guard, clock)')
  .option('--check-integrations', "also run each active integration's live credential check")
  .action(async (opts: { checkIntegrations?: boolean }) => {
    const { runDoctor, formatCheck } = await import('./doctor.js');
    const results = await runDoctor({ checkIntegrations: opts.checkIntegrations });
    for (const result of results) console.log(formatCheck(result));
    const failed = results.filter((result) => result.status === 'fail').length;
    console.log(failed === 0 ? 'no problems found' : `${failed} check${failed === 1 ? '' : 's'} failed`);
    // Pipes are written synchronously on Linux, so exiting here loses no line; a driver's idle handle cannot hold the exit.
    process.exit(failed === 0 ? 0 : 1);
  });

const keys = program.command('keys').description('Secret keys and application identifiers');
keys
  .command('list', { isDefault: true })
  .description("Print each environment's public application identifier (the Inbox's applicationIdentifier) and key count")
  .action(async () => {
    const container = await createContainer(loadConfig());
    await bootstrapTenancy(container.deps);
    for (const environment of await container.deps.store.tenancy.listEnvironments()) {
      const counts = await container.deps.store.tenancy.countApiKeys(environment._id);
      console.log(
        `${environment.name}\tapplicationIdentifier=${environment.identifier}\tkeys=${counts.total}\tkeys usable for Inbox HMAC=${counts.hmacCapable}`,
      );
    }
    await container.close();
  });
keys
  .command('create')
  .requiredOption('--environment <name>', 'environment name (development, production)')
  .description('Create a secret key and print it (it is stored hashed and cannot be shown again)')
  .action(async (opts: { environment: string }) => {
    const container = await createContainer(loadConfig());
    await bootstrapTenancy(container.deps);
    const { secretKey } = await createApiKey(container.deps, { environmentName: opts.environment });
    console.log(secretKey);
    await container.close();
  });

const token = program.command('token').description('Session tokens for Authorization: Bearer');
token
  .command('create')
  .requiredOption('--environment <name>', 'environment name')
  .option('--ttl <duration>', 'lifetime, e.g. 30m, 1h, 7d', '1h')
  .description('Print a session token (a dashboard caller: sees integration credentials)')
  .action(async (opts: { environment: string; ttl: string }) => {
    const container = await createContainer(loadConfig());
    await bootstrapTenancy(container.deps);
    const { token: value } = await createSessionToken(container.deps, { environmentName: opts.environment, ttlSeconds: parseDuration(opts.ttl) });
    console.log(value);
    await container.close();
  });

/**
 * Dashboard users. These open the database only (no Redis, no queue), so they work next to a running server on the
 * same data: embedded, the same SQLite file (WAL lets both write); scaled out, the same PostgreSQL.
 */
const users = program.command('users').description('Dashboard users');
users
  .command('create')
  .requiredOption('--email <email>', 'sign-in email')
  .requiredOption('--password <password>', 'at least 8 characters')
  .option('--role <role>', `one of ${USER_ROLES.join(', ')}`, 'admin')
  .option('--name <name>', 'display name')
  .description('Create a dashboard user in the organization made on the first start')
  .action(async (opts: { email: string; password: string; role: string; name?: string }) => {
    await withDatabase(async (deps) => {
      const user = await createUser(deps, deps.store, { email: opts.email, password: opts.password, role: opts.role as UserRole, name: opts.name });
      console.log(`created ${user.role} ${user.email} (${user._id})`);
    });
  });
users
  .command('reset-password')
  .requiredOption('--email <email>', 'the user to reset')
  .option('--password <password>', 'the new password (default: a random one, printed)')
  .description("Set a user's password and sign out their sessions; prints the new password when generated")
  .action(async (opts: { email: string; password?: string }) => {
    await withDatabase(async (deps) => {
      const result = await resetPassword(deps, { email: opts.email, password: opts.password });
      console.log(opts.password ? `password of ${result.email} changed` : result.password);
    });
  });

/** Where the PostgreSQL backup procedure is documented (`herald backup` with DATABASE_URL points there). */
const POSTGRES_BACKUP_DOC = 'docs/operations-data.md, "Backups: PostgreSQL" (pg_dump / pg_restore, and keep the encryption key)';

program
  .command('backup')
  .requiredOption('--to <file>', 'the archive to write (a new file; .tar.gz)')
  .option('--no-key', 'leave the encryption key out of the archive (then keep it separately)')
  .description('Copy the embedded database (and its encryption key) into one archive, while the server runs')
  .action(async (opts: { to: string; key: boolean }) => {
    const config = loadConfig();
    if (config.databaseUrl) throw new Error(`herald backup copies the embedded SQLite store; with DATABASE_URL set, back up PostgreSQL with pg_dump: see ${POSTGRES_BACKUP_DOC}`);
    const { backupEmbedded } = await import('./store/sqlite/backup.js');
    const result = await backupEmbedded({ dataDir: config.dataDir, to: opts.to, includeKey: opts.key, keyFromEnvironment: config.encryptionKey !== undefined });
    console.log(`backup written to ${result.file} (${(result.bytes / 1024 / 1024).toFixed(1)} MB, schema ${result.manifest.schema ?? 'empty'}, mode 0600)`);
    console.error(`warning: ${result.keyNote}`);
  });

program
  .command('restore')
  .requiredOption('--from <file>', 'an archive made by herald backup')
  .option('--data-dir <dir>', 'the data directory to restore into (default HERALD_DATA_DIR); must be empty or new')
  .description('Restore a backup into an empty data directory (never one a running server holds)')
  .action(async (opts: { from: string; dataDir?: string }) => {
    const config = loadConfig();
    if (config.databaseUrl) throw new Error(`herald restore restores the embedded SQLite store; with DATABASE_URL set, use pg_restore: see ${POSTGRES_BACKUP_DOC}`);
    const { restoreEmbedded } = await import('./store/sqlite/backup.js');
    const result = await restoreEmbedded({ from: opts.from, dataDir: opts.dataDir ?? config.dataDir });
    console.log(`restored ${opts.from} (made ${result.manifest.createdAt}) into ${result.dataDir}`);
    console.error(`note: ${result.keyNote}`);
  });

program
  .command('vacuum')
  .description('Compact the embedded database and switch it to incremental auto-vacuum (Herald must be stopped)')
  .action(async () => {
    const config = loadConfig();
    if (config.databaseUrl) throw new Error('herald vacuum is for the embedded SQLite store; PostgreSQL reclaims space with its own (auto)vacuum');
    const { dataDirInUse, vacuumFile } = await import('./store/sqlite/storage.js');
    const inUse = dataDirInUse(config.dataDir);
    if (inUse) throw new Error(`refusing to vacuum: ${inUse}; stop it first`);
    const { beforeBytes, afterBytes } = vacuumFile(config.dataDir);
    console.log(`vacuumed: ${(beforeBytes / 1024 / 1024).toFixed(1)} MB -> ${(afterBytes / 1024 / 1024).toFixed(1)} MB`);
  });

/** Runs `work` with the store over the configured database (migrated, bootstrapped), then closes it. */
async function withDatabase(work: (deps: Awaited<ReturnType<typeof openDatabaseOnly>>['deps']) => Promise<void>): Promise<void> {
  const opened = await openDatabaseOnly(loadConfig());
  try {
    const boot = await bootstrapTenancy(opened.deps);
    for (const [environment, secretKey] of Object.entries(boot.keys)) console.error(`secret key for the ${environment} environment (shown once): ${secretKey}`);
    await work(opened.deps);
  } finally {
    await opened.close();
  }
}

function parseDuration(text: string): number {
  const match = /^(\d+)\s*(s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new Error(`--ttl must look like 30m, 1h or 7d, got "${text}"`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[(match[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
