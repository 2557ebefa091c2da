import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type CompiledQuery } from 'kysely';
import { migrateToLatest } from '../../src/store/sql/migrate.js';
import type { Database } from '../../src/store/sql/schema.js';
import { SqlStore } from '../../src/store/sql/sql-store.js';
import { SecretBox } from '../../src/store/secret-box.js';
import { groupCommitSqliteDialect } from '../../src/store/sqlite/group-commit-driver.js';

/**
 * A migrated SQLite store in a temporary folder for query-plan tests: `sent` records every statement the
 * repositories send (for EXPLAIN QUERY PLAN on the real SQL), `plans` is a read-only connection to run it on.
 */
export interface SqlitePlanProbe {
  db: Kysely<Database>;
  store: SqlStore;
  plans: BetterSqlite3.Database;
  sent: CompiledQuery[];
  close(): Promise<void>;
}

export async function openSqlitePlanProbe(folderPrefix: string): Promise<SqlitePlanProbe> {
  const dir = mkdtempSync(join(tmpdir(), folderPrefix));
  const sent: CompiledQuery[] = [];
  const db = new Kysely<Database>({
    dialect: groupCommitSqliteDialect(new BetterSqlite3(join(dir, 'herald.sqlite'))),
    log: (event) => {
      if (event.level === 'query') sent.push(event.query);
    },
  });
  await migrateToLatest(db, 'sqlite');
  const store = new SqlStore(db, { dialect: 'sqlite', secretBox: new SecretBox(Buffer.alloc(32, 7)) });
  const plans = new BetterSqlite3(join(dir, 'herald.sqlite'), { readonly: true });
  return {
    db,
    store,
    plans,
    sent,
    async close() {
      plans.close();
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
