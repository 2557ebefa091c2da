import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { keepTemporaryFilesInMemory, openSqlite, SQLITE_MMAP_BYTES, WAL_AUTOCHECKPOINT_PAGES } from '../../../src/store/sqlite/connection.js';
import { synchronousWriterOf } from '../../../src/store/sql/snapshot-reads.js';

/** The embedded database's settings, read back from SQLite itself. */
describe('openSqlite', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('opens the file in WAL mode, synchronous NORMAL, reading through a memory map, checkpointing every 10,000 pages', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-sqlite-'));
    dirs.push(dir);
    const db = openSqlite(dir);
    try {
      const pragma = async (name: string) => Object.values((await sql.raw<Record<string, unknown>>(`pragma ${name}`).execute(db)).rows[0])[0];
      expect(await pragma('journal_mode')).toBe('wal');
      expect(await pragma('synchronous')).toBe(1);
      expect(await pragma('mmap_size')).toBe(SQLITE_MMAP_BYTES);
      expect(WAL_AUTOCHECKPOINT_PAGES).toBe(10_000);
      expect(await pragma('wal_autocheckpoint')).toBe(WAL_AUTOCHECKPOINT_PAGES);
    } finally {
      await db.destroy();
    }
  });
});

describe('keepTemporaryFilesInMemory', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** write(2)-like system calls of this thread so far (Linux). */
  const writeCalls = () => Number(/^syscw: (\d+)$/m.exec(readFileSync('/proc/thread-self/io', 'utf8'))?.[1]);

  it.runIf(existsSync('/proc/thread-self/io'))('keeps a savepoint of the shared transaction from writing its sub-journal to a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-sqlite-'));
    dirs.push(dir);
    const db = openSqlite(dir);
    try {
      await sql`create table pages (id integer primary key, body text not null)`.execute(db);
      // ~100 pages of 4 KB: a block changing them all journals far more than SQLite's 64 KiB in memory.
      await sql`insert into pages (id, body) with recursive n(id) as (select 1 union all select id + 1 from n where id < 200) select id, printf('%.2000c', 'x') from n`.execute(db);
      const writer = synchronousWriterOf(db)!;
      const callsOfBlock = () =>
        writer.writeTogether((run) => {
          const before = writeCalls();
          run(CompiledQuery.raw(`update pages set body = body || 'y'`));
          return writeCalls() - before;
        });
      // SQLite's default: past 64 KiB the sub-journal is a temporary file, two write calls per page.
      expect(await callsOfBlock()).toBeGreaterThan(100);
      keepTemporaryFilesInMemory(db);
      expect(await callsOfBlock()).toBe(0);
      expect((await sql<{ temp_store: number }>`pragma temp_store`.execute(db)).rows[0]?.temp_store).toBe(2);
    } finally {
      await db.destroy();
    }
  });
});
