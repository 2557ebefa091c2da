import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite, SQLITE_MMAP_BYTES, WAL_AUTOCHECKPOINT_PAGES } from '../../../src/store/sqlite/connection.js';

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
