import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Database } from '../sql/schema.js';
import { groupCommitSqliteDialect } from './group-commit-driver.js';

/**
 * The embedded database: one SQLite file under the data directory, in WAL mode so readers never block
 * the writer. `synchronous = NORMAL` is durable across process crashes in WAL mode (only an OS crash
 * can lose the last transactions), which is the guarantee the crash-safety tests check.
 */
export function openSqlite(dataDir: string, fileName = 'herald.sqlite'): Kysely<Database> {
  mkdirSync(dataDir, { recursive: true });
  const sqlite = new BetterSqlite3(join(dataDir, fileName));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  cachePreparedStatements(sqlite);
  return new Kysely<Database>({ dialect: groupCommitSqliteDialect(sqlite) });
}

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
