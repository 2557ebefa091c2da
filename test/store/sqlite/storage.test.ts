import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDirInUse, holdDataDir, prepareAutoVacuum, vacuumFile } from '../../../src/store/sqlite/storage.js';
import { openSqlite } from '../../../src/store/sqlite/connection.js';
import { runHeraldCommand } from '../../helpers/herald-process.js';

/** The embedded data dir: switching older files to incremental auto-vacuum, and telling whether a server holds it. */
const root = mkdtempSync(join(tmpdir(), 'herald-storage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const newDir = () => mkdtempSync(join(root, `d${dirs++}-`));

/** A database as versions before retention made them: auto_vacuum NONE, with data. */
function legacyDatabase(dir: string, rows: number): void {
  const sqlite = new Database(join(dir, 'herald.sqlite'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.exec('create table t (a)');
  sqlite.prepare('insert into t select randomblob(1000) from (with recursive c(n) as (select 1 union all select n + 1 from c where n < ?) select n from c)').run(rows);
  sqlite.close();
}
const autoVacuum = (dir: string) => {
  const sqlite = new Database(join(dir, 'herald.sqlite'), { readonly: true });
  try {
    return sqlite.pragma('auto_vacuum', { simple: true });
  } finally {
    sqlite.close();
  }
};

describe('auto-vacuum', () => {
  it('creates new databases in incremental mode', async () => {
    const dir = newDir();
    const db = openSqlite(dir);
    await db.schema.createTable('x').addColumn('a', 'text').execute();
    await db.destroy();
    expect(autoVacuum(dir)).toBe(2);
    expect(prepareAutoVacuum(dir)).toBe('incremental');
  });

  it('switches an older database at start when small, and leaves a large one with a warning state', () => {
    const small = newDir();
    legacyDatabase(small, 500);
    expect(autoVacuum(small)).toBe(0);
    expect(prepareAutoVacuum(small)).toBe('switched');
    expect(autoVacuum(small)).toBe(2);
    expect(prepareAutoVacuum(small)).toBe('incremental');

    const large = newDir();
    legacyDatabase(large, 500);
    expect(prepareAutoVacuum(large, 64 * 1024)).toBe('too-large');
    expect(autoVacuum(large)).toBe(0);
    // herald vacuum switches it (offline) and compacts it.
    const sqlite = new Database(join(large, 'herald.sqlite'));
    sqlite.exec('delete from t where rowid % 2 = 0');
    sqlite.close();
    const { beforeBytes, afterBytes } = vacuumFile(large);
    expect(afterBytes).toBeLessThan(beforeBytes);
    expect(autoVacuum(large)).toBe(2);
  });

  it('refuses `herald vacuum` on a data dir in use', async () => {
    const dir = newDir();
    legacyDatabase(dir, 10);
    const holder = new Database(join(dir, 'herald.sqlite'));
    holder.prepare('select count(*) from t').get();
    try {
      const result = await runHeraldCommand(['vacuum'], { HERALD_DATA_DIR: dir });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('refusing to vacuum');
    } finally {
      holder.close();
    }
    const done = await runHeraldCommand(['vacuum'], { HERALD_DATA_DIR: dir });
    expect(done.status, done.stderr).toBe(0);
    expect(autoVacuum(dir)).toBe(2);
  });
});

describe('data dir in use', () => {
  it('names a live pid, ignores a dead one, and sees an open database without a pid file', async () => {
    const dir = newDir();
    legacyDatabase(dir, 1);
    expect(dataDirInUse(dir)).toBeUndefined();

    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    writeFileSync(join(dir, 'herald.pid'), `${sleeper.pid}\n`);
    expect(dataDirInUse(dir)).toBe(`a Herald server (pid ${sleeper.pid}) is running on ${dir}`);
    sleeper.kill('SIGKILL');
    await new Promise((resolve) => sleeper.once('exit', resolve));
    expect(dataDirInUse(dir)).toBeUndefined();

    const holder = new Database(join(dir, 'herald.sqlite'));
    holder.prepare('select count(*) from t').get();
    try {
      expect(dataDirInUse(dir)).toContain('is open in another process');
    } finally {
      holder.close();
    }
    expect(dataDirInUse(dir)).toBeUndefined();
  });

  it("removes its own pid file on release, not another process's", () => {
    const dir = newDir();
    const release = holdDataDir(dir);
    expect(statSync(join(dir, 'herald.pid')).isFile()).toBe(true);
    release();
    expect(() => statSync(join(dir, 'herald.pid'))).toThrow();
    const releaseAgain = holdDataDir(dir);
    writeFileSync(join(dir, 'herald.pid'), '1\n');
    releaseAgain();
    expect(statSync(join(dir, 'herald.pid')).isFile()).toBe(true);
  });
});
