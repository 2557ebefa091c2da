import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../../src/store/sqlite/connection.js';
import { startBackgroundCheckpoints } from '../../../src/store/sqlite/background-checkpoint.js';
import { loadConfig } from '../../../src/config.js';

/**
 * WAL checkpoints on a thread of their own (session 16, issue 24: the automatic checkpoint inside a commit blocked the
 * event loop for 10-130 ms under a trigger burst).
 */
describe('background WAL checkpoints', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const newDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'herald-checkpoint-'));
    dirs.push(dir);
    return dir;
  };
  const fill = async (db: ReturnType<typeof openSqlite>) => {
    await sql`create table if not exists filler (id integer primary key, body text)`.execute(db);
    for (let i = 0; i < 20; i++) await sql`insert into filler (body) values (${'x'.repeat(20_000)})`.execute(db);
  };

  it('copies committed pages into the database file from the thread, the main connection never checkpointing them', async () => {
    const dir = newDir();
    // No thread from openSqlite: the one under test is started by hand, so the test can ask it for a pass.
    const db = openSqlite(dir);
    const file = join(dir, 'herald.sqlite');
    const checkpoints = startBackgroundCheckpoints(file, { intervalMs: 60_000 });
    try {
      await fill(db);
      // ~400 KB committed: in the WAL only (10,000 pages before the main connection's own checkpoint).
      const before = statSync(file).size;
      expect(before).toBeLessThan(100_000);
      const pass = await checkpoints.checkpointNow();
      expect(pass.busy).toBe(0);
      expect(pass.log).toBeGreaterThan(100);
      expect(pass.checkpointed).toBe(pass.log);
      expect(statSync(file).size).toBeGreaterThan(400_000);
      // The main connection still reads what it wrote.
      expect((await sql<{ n: number }>`select count(*) as n from filler`.execute(db)).rows[0]!.n).toBe(20);
    } finally {
      await checkpoints.stop();
      await db.destroy();
    }
  });

  it('openSqlite with an interval starts the thread, and destroy() stops it before closing, so the close checkpoints and removes the WAL', async () => {
    const dir = newDir();
    const db = openSqlite(dir, undefined, { checkpointIntervalMs: 10 });
    const file = join(dir, 'herald.sqlite');
    await fill(db);
    // Eventually copied by the thread (the main connection's checkpoint is 10,000 pages away).
    for (let i = 0; i < 500 && statSync(file).size < 400_000; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(statSync(file).size).toBeGreaterThan(400_000);
    await db.destroy();
    // The last connection to close checkpoints and deletes the WAL: the thread's connection was closed first.
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('a process awaiting destroy() with nothing else pending lives until the thread has stopped and the database is closed', () => {
    // In a process of its own: vitest keeps its own process alive. The thread is unref'd (it never keeps Herald
    // alive); while stopping it must be held, or the process ends inside destroy() (status 13 from the top-level await).
    const dir = newDir();
    const connection = new URL('../../../src/store/sqlite/connection.ts', import.meta.url).href;
    const script = `import { openSqlite } from ${JSON.stringify(connection)};
const db = openSqlite(${JSON.stringify(dir)}, undefined, { checkpointIntervalMs: 50 });
await db.selectNoFrom((eb) => eb.lit(1).as('one')).execute();
await db.destroy();
console.log('destroyed');`;
    for (let run = 0; run < 3; run++) {
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
      expect({ status: child.status, stdout: child.stdout.trim() }, child.stderr).toEqual({ status: 0, stdout: 'destroyed' });
    }
  }, 90_000);

  it('HERALD_SQLITE_CHECKPOINT_MS: 50 by default, 0 turns the thread off', () => {
    expect(loadConfig({}).sqliteCheckpointMs).toBe(50);
    expect(loadConfig({ HERALD_SQLITE_CHECKPOINT_MS: '0' }).sqliteCheckpointMs).toBe(0);
  });
});
