import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Database } from '../sql/schema.js';
import { registerSnapshotReader } from '../sql/snapshot-reads.js';
import type { Logger } from '../../usecases/deps.js';
import { startBackgroundCheckpoints } from './background-checkpoint.js';
import { GroupCommitSqliteDriver, groupCommitSqliteDialect } from './group-commit-driver.js';

/** The embedded database's file name under the data directory. */
export const SQLITE_FILE = 'herald.sqlite';

/**
 * The embedded database: one SQLite file under the data directory, in WAL mode so readers never block
 * the writer. `synchronous = NORMAL` is durable across process crashes in WAL mode (only an OS crash
 * can lose the last transactions), which is the guarantee the crash-safety tests check.
 *
 * Reads go through a memory map of the file (up to SQLITE_MMAP_BYTES; writes still go through the WAL): with
 * 1M messages the file is ~2.5 GB, far beyond the page cache, and each list page read its rows with a system call
 * per page (`npm run bench:lists`: 1M-row message lists 1,100–1,200 → 1,500–1,900 req/s, p99 17–21 → 11–15 ms,
 * now the same as at 10k; the engine benchmark did not move). The cost SQLite documents: an I/O error while
 * reading the file becomes a crash (SIGBUS) instead of an error, after which a restart recovers from the WAL.
 */
export function openSqlite(
  dataDir: string,
  fileName = SQLITE_FILE,
  options: { checkpointIntervalMs?: number; logger?: Pick<Logger, 'warn'> } = {},
): Kysely<Database> {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, fileName);
  const sqlite = new BetterSqlite3(file);
  // Takes effect in a new file (before its first table) and after a VACUUM; retention gives deleted pages back with
  // incremental vacuum (store/sqlite/storage.ts switches files made before this).
  sqlite.pragma('auto_vacuum = INCREMENTAL');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`mmap_size = ${SQLITE_MMAP_BYTES}`);
  sqlite.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  cachePreparedStatements(sqlite);
  // After the pragmas: the file is in WAL mode before the thread's connection opens it.
  const checkpoints = options.checkpointIntervalMs
    ? startBackgroundCheckpoints(file, {
        intervalMs: options.checkpointIntervalMs,
        onError: (message) => options.logger?.warn({ error: message }, 'background WAL checkpoint failed'),
      })
    : undefined;
  return kyselyOver(sqlite, checkpoints && (() => checkpoints.stop()));
}

/**
 * A read-only connection to the embedded database file, for a reader thread (src/readers/): the same statement cache,
 * memory map and snapshot reads (readTogether) as the main connection, and no writes (SQLite refuses them on a read-only
 * handle). In WAL mode it reads the last committed state beside the main connection's writer, without a lock between
 * them; what it cannot see is only what is not committed yet, which no client has been told about (a write's promise
 * resolves after its commit, group-commit-driver.ts).
 */
export function openSqliteReader(file: string): Kysely<Database> {
  const sqlite = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma(`mmap_size = ${SQLITE_MMAP_BYTES}`);
  cachePreparedStatements(sqlite);
  return kyselyOver(sqlite);
}

/** Kysely over a connection through the group-commit driver, with its snapshot reads registered: both connections' tail. */
function kyselyOver(sqlite: BetterSqlite3.Database, beforeClose?: () => Promise<void>): Kysely<Database> {
  const driver = new GroupCommitSqliteDriver(sqlite, beforeClose);
  const db = new Kysely<Database>({ dialect: groupCommitSqliteDialect(sqlite, driver) });
  registerSnapshotReader(db, driver);
  connections.set(db, sqlite);
  return db;
}

const connections = new WeakMap<Kysely<Database>, BetterSqlite3.Database>();

/**
 * For a serving process, after its migrations: the connection keeps its temporary files in memory, which matters for
 * one of them, the sub-journal. Every write of the group commit runs inside one shared transaction, so each savepoint
 * (a delivery's writeTogether block, an explicit transaction) and each multi-row statement copies every page it is the
 * first to change into the sub-journal, in case it rolls back. SQLite keeps that journal in memory up to 64 KiB, then
 * moves it to a temporary file that stays open until the shared transaction commits: every later copy in that
 * transaction cost two write system calls (page number, page), 70-80 per delivery, and the next transaction that
 * spilled created the file anew (`strace`, BENCHMARKS.md session 28). The journal is only ever read to roll a savepoint
 * back and is emptied when the outermost savepoint ends, so its memory is bounded by the pages one block or statement
 * changes; durability is unchanged (commits still go through the WAL with the same synchronous setting). The
 * migrations run before this, with SQLite's default: one of them may rewrite a large table. This also keeps the
 * connection's sorts and temporary tables in memory, which SQLite's default moves to a file beyond the 16 MB page
 * cache; Herald's reads go through indexes in their order, so a sort of that size here would itself be a bug.
 */
export function keepTemporaryFilesInMemory(db: Kysely<Database>): void {
  connections.get(db)?.pragma('temp_store = MEMORY');
}

/** SQLite's own ceiling in this build (SQLITE_MAX_MMAP_SIZE); a larger file is read past it with system calls. */
export const SQLITE_MMAP_BYTES = 0x7fff0000;

/**
 * Pages the WAL may hold before a commit copies them into the database file (SQLite's default is 1,000). A trigger with
 * its delivery rewrites the same hot pages (the tails of id-ordered indexes, counters, the queue) many times over;
 * each checkpoint copies a page once however often it changed since the last, so checkpointing a tenth as often copies
 * far fewer pages: CPU per trigger with its delivery -10 to -15 % (`node --import tsx bench/profile-triggers.ts`,
 * BENCHMARKS.md, issue 24). The WAL file grows to about 40 MB (10,000 pages of 4 KB) and stays that size; durability
 * is unchanged (a crash replays the WAL).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query afresh; profiles showed `prepare()` at 6-7 % of CPU on
 * list and trigger paths. Queries are few distinct texts, so the compiled statements are kept and reused.
 * Safe because Herald never streams (`iterate`) a result: `all()`/`run()` finish before the next use.
 */
function cachePreparedStatements(sqlite: BetterSqlite3.Database): void {
  const prepare = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, BetterSqlite3.Statement>();
  sqlite.prepare = ((source: string, ...internal: unknown[]) => {
    // better-sqlite3's own helpers (pragma) pass extra arguments and change statement modes: not cached.
    if (internal.length > 0) return (prepare as (...args: unknown[]) => BetterSqlite3.Statement)(source, ...internal);
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof sqlite.prepare;
}
