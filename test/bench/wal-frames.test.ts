import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { countWalFrames } from '../../bench/lib/wal-frames.js';

describe('countWalFrames', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function openDatabase(): Database.Database {
    dir = mkdtempSync(join(tmpdir(), 'herald-wal-frames-'));
    const db = new Database(join(dir, 'test.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('create table items (id integer primary key, name text); create index items_name on items (name)');
    db.pragma('wal_checkpoint(TRUNCATE)');
    return db;
  }

  function ownersOf(db: Database.Database): (page: number) => string | undefined {
    const owners = new Map((db.prepare('select pageno, name from dbstat').all() as Array<{ pageno: number; name: string }>).map((row) => [row.pageno, row.name]));
    return (page) => owners.get(page);
  }

  it('counts each commit and attributes every frame to the table or index whose page it wrote', () => {
    const db = openDatabase();
    const insert = db.prepare('insert into items (name) values (?)');
    for (let i = 0; i < 5; i++) insert.run(`item ${i}`);
    const count = countWalFrames(join(dir!, 'test.sqlite-wal'), ownersOf(db));
    expect(count.commits).toBe(5);
    // Each commit writes the table's page and the index's page (and page 1, whose header holds the file size).
    expect(count.byOwner.get('items')).toBe(5);
    expect(count.byOwner.get('items_name')).toBe(5);
    expect(count.frames).toBe([...count.byOwner.values()].reduce((sum, frames) => sum + frames, 0));
    db.close();
  });

  it('counts nothing once the log has been checkpointed and restarted, although the old frames are still in the file', () => {
    const db = openDatabase();
    const insert = db.prepare('insert into items (name) values (?)');
    for (let i = 0; i < 20; i++) insert.run(`before ${i}`);
    db.pragma('wal_checkpoint(PASSIVE)');
    // The next writer restarts the log from its start with a new salt; its one commit is all that counts.
    insert.run('after');
    const count = countWalFrames(join(dir!, 'test.sqlite-wal'), ownersOf(db));
    expect(count.commits).toBe(1);
    db.close();
  });
});
