import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/** The embedded database's file name in the data directory (openSqlite's default). */
export const SQLITE_FILE = 'herald.sqlite';
/** Written by a running embedded server: its pid, so tools can name the process that holds the data directory. */
export const PID_FILE = 'herald.pid';
/** The generated master key (container.ts loadMasterKey). */
export const KEY_FILE = 'encryption.key';
/**
 * A file made before auto_vacuum = INCREMENTAL is switched at start by a VACUUM (a full copy) up to this size, a few
 * seconds; a larger one is left as it is with a warning (`herald vacuum` switches it while Herald is stopped). Space
 * freed by retention is reused by new rows either way; only giving it back to the file system needs the switch.
 */
export const VACUUM_ON_START_MAX_BYTES = 256 * 1024 * 1024;

export type AutoVacuumState = 'incremental' | 'switched' | 'too-large' | 'new';

/**
 * Before the embedded server opens its database: switches an existing file to auto_vacuum = INCREMENTAL when it is
 * small enough (see VACUUM_ON_START_MAX_BYTES). Nothing else has the file open yet, which VACUUM needs.
 */
export function prepareAutoVacuum(dataDir: string, maxBytes = VACUUM_ON_START_MAX_BYTES): AutoVacuumState {
  const file = join(dataDir, SQLITE_FILE);
  if (!existsSync(file)) return 'new';
  const sqlite = new BetterSqlite3(file, { timeout: 5000 });
  try {
    if (Number(sqlite.pragma('auto_vacuum', { simple: true })) === 2) return 'incremental';
    const { n: tables } = sqlite.prepare("select count(*) as n from sqlite_master where type = 'table'").get() as { n: number };
    sqlite.pragma('auto_vacuum = INCREMENTAL');
    if (tables === 0) return 'new';
    if (statSync(file).size > maxBytes) return 'too-large';
    sqlite.exec('vacuum');
    return 'switched';
  } finally {
    sqlite.close();
  }
}

/** `herald vacuum`: switches the file to incremental auto-vacuum and compacts it; the caller checks it is not in use. */
export function vacuumFile(dataDir: string): { beforeBytes: number; afterBytes: number } {
  const file = join(dataDir, SQLITE_FILE);
  const beforeBytes = statSync(file).size;
  const sqlite = new BetterSqlite3(file, { timeout: 5000, fileMustExist: true });
  try {
    sqlite.pragma('auto_vacuum = INCREMENTAL');
    sqlite.exec('vacuum');
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    sqlite.close();
  }
  return { beforeBytes, afterBytes: statSync(file).size };
}

/** Marks the data directory as held by this process; the returned function removes the mark (if still ours). */
export function holdDataDir(dataDir: string): () => void {
  const file = join(dataDir, PID_FILE);
  writeFileSync(file, `${process.pid}\n`, { mode: 0o644 });
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}

/**
 * Why the data directory is in use by a running Herald (or anything else holding its database), or undefined. Two
 * signs, either enough: the pid file of a live process, and SQLite's own locks. In WAL mode every open connection
 * holds a shared lock for its whole life, so an exclusive lock taken without waiting fails while any process (a server
 * on another host or container sharing the volume, a `herald users` command) has the file open; a pid file left by a
 * killed server names a dead process and is ignored.
 */
export function dataDirInUse(dataDir: string): string | undefined {
  const pidFile = join(dataDir, PID_FILE);
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
      return `a Herald server (pid ${pid}) is running on ${dataDir}`;
    }
  }
  const file = join(dataDir, SQLITE_FILE);
  if (!existsSync(file)) return undefined;
  const probe = new BetterSqlite3(file, { timeout: 0, fileMustExist: true });
  try {
    probe.pragma('locking_mode = EXCLUSIVE');
    probe.exec('begin exclusive');
    probe.exec('commit');
    return undefined;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return `${file} is open in another process (a running Herald server?)`;
    throw error;
  } finally {
    probe.close();
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive but someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the directory is missing or has no entries. */
export function isEmptyDir(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}
