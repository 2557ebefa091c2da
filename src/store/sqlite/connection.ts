import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../sql/schema.js';

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
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
}
