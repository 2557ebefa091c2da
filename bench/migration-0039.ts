import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { openSqlite } from '../src/store/sqlite/connection.js';
import { migrateToLatest, migratorFor } from '../src/store/sql/migrate.js';
import { migrationProvider } from '../src/store/sql/migrations.js';

/**
 * `node --import tsx bench/migration-0039.ts <dataDir> [events] [lag]`: the upgrade cost of migration 0039 (SQLite's
 * execution_details remade WITHOUT ROWID). A new SQLite database in <dataDir> is migrated up to 0038 and given the
 * execution details of `events` (1,000,000) in-app deliveries, as Herald writes them: per event "Step created" and
 * "Step queued" at its trigger and "Message sent to the subscriber inbox" at its delivery, `lag` (2,000) triggers later,
 * so the table's rowid order interleaves events as a loaded drain does; ids of Herald's shape (8 hex digits of the
 * second, 16 more), 1,000 events a second. Then 0039 runs, timed, and the script prints the figures and deletes
 * <dataDir>. Only execution_details is seeded: the migration reads no other table.
 */
const dataDir = process.argv[2]!;
const events = Number(process.argv[3] ?? 1_000_000);
const lag = Number(process.argv[4] ?? 2_000);
rmSync(dataDir, { recursive: true, force: true });
const db = openSqlite(dataDir);
const file = join(dataDir, 'herald.sqlite');
try {
  const before0039 = { getMigrations: async () => Object.fromEntries(Object.entries(await migrationProvider.getMigrations()).filter(([name]) => name < '0039')) };
  const { error } = await (await migratorFor(db, 'sqlite', before0039)).migrateToLatest();
  if (error) throw error;

  const seedStarted = Date.now();
  // Event i: second 0x65000000 + i / 1000; its ids end with i in 16 hex digits (details: the step k in the first digit).
  const hex = (expression: string, width: number) => `substr('0000000000000000' || printf('%x', ${expression}), -${width}, ${width})`;
  const eventId = (i: string) => `${hex(`1694498816 + (${i}) / 1000`, 8)} || ${hex(i, 16)}`;
  const detailId = (i: string, k: number) => `${hex(`1694498816 + (${i}) / 1000`, 8)} || '${k}' || ${hex(i, 15)}`;
  const row = (i: string, k: number, status: string, detail: string, provider: string) =>
    `select ${detailId(i, k)}, '0194d6f0a1b2c3d4e5f60718', 'a' || ${hex(i, 23)}, ${eventId(i)}, '${status}', '${detail}', 0, 0, ${provider}, null, 'Internal',
       strftime('%Y-%m-%dT%H:%M:%fZ', 1694498816 + (${i}) / 1000.0, 'unixepoch')`;
  const chunk = 100_000;
  for (let from = 1; from <= events + lag; from += chunk) {
    const to = Math.min(from + chunk - 1, events + lag);
    await sql
      .raw(
        `insert into execution_details (id, environment_id, job_id, notification_id, status, detail, is_retry, is_test, provider_id, raw, source, created_at)
         with recursive n(i) as (select ${from} union all select i + 1 from n where i < ${to})
         select * from (
           ${row('i', 1, 'Pending', 'Step created', 'null')} from n where i <= ${events}
           union all ${row('i', 2, 'Queued', 'Step queued', 'null')} from n where i <= ${events}
           union all ${row(`i - ${lag}`, 3, 'Success', 'Message sent to the subscriber inbox', "'novu'")} from n where i > ${lag}
         )`,
      )
      .execute(db);
  }
  // A second connection empties the WAL and counts pages (the store's driver keeps its own statements and reads).
  const side = new BetterSqlite3(file);
  const pages = () => side.prepare('select name, count(*) as pages from dbstat group by name order by pages desc').all() as Array<{ name: string; pages: number }>;
  side.pragma('wal_checkpoint(TRUNCATE)');
  const seedMs = Date.now() - seedStarted;
  const rows = Number((await sql<{ n: number }>`select count(*) as n from execution_details`.execute(db)).rows[0]!.n);
  const bytes = pages();
  const sizeBefore = statSync(file).size;

  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  const applied = await migrateToLatest(db);
  const migrationMs = Number(process.hrtime.bigint() - started) / 1e6;
  const cpu = process.cpuUsage(cpuStarted);
  const walBytes = statSync(`${file}-wal`).size;
  side.pragma('wal_checkpoint(TRUNCATE)');
  const after = pages();
  const rowsAfter = Number((await sql<{ n: number }>`select count(*) as n from execution_details`.execute(db)).rows[0]!.n);
  console.log(
    JSON.stringify({
      events,
      rows,
      rowsAfter,
      applied,
      seedMs,
      migrationMs: Math.round(migrationMs),
      migrationCpuMs: Math.round((cpu.user + cpu.system) / 1000),
      walBytesAtCommit: walBytes,
      fileBytesBefore: sizeBefore,
      fileBytesAfter: statSync(file).size,
      pagesBefore: Object.fromEntries(bytes.filter((b) => b.pages > 1).map((b) => [b.name, b.pages])),
      pagesAfter: Object.fromEntries(after.filter((b) => b.pages > 1).map((b) => [b.name, b.pages])),
    }),
  );
  side.close();
} finally {
  await db.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}
