import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, fsyncSync, openSync, closeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import BetterSqlite3 from 'better-sqlite3';
import { dataDirInUse, isEmptyDir, KEY_FILE, SQLITE_FILE } from './storage.js';
import { readTar, tarStream, type TarEntry } from './tar.js';

/**
 * `herald backup` and `herald restore` for the embedded store. A backup is a gzipped tar (`tar tzf` lists it) of:
 * manifest.json, herald.sqlite (a consistent copy) and, unless left out, encryption.key (the master key that decrypts
 * integration credentials and the keys kept for Inbox HMACs). With the key inside, the archive is as secret as the key:
 * it is written with mode 0600. docs/operations-data.md.
 */
export const BACKUP_FORMAT = 'herald-backup';
export const BACKUP_VERSION = 1;
const MANIFEST = 'manifest.json';

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: number;
  createdAt: string;
  /** The last migration the copied database had. */
  schema: string | null;
  includesEncryptionKey: boolean;
}

export class BackupError extends Error {}

export interface BackupOptions {
  dataDir: string;
  to: string;
  /** Put encryption.key into the archive (when the key lives in the data dir). */
  includeKey: boolean;
  /** The key is given by HERALD_ENCRYPTION_KEY: it is not in the data dir and is never archived. */
  keyFromEnvironment: boolean;
}

export interface BackupResult {
  file: string;
  bytes: number;
  manifest: BackupManifest;
  /** What the operator must be told about the key. */
  keyNote: string;
}

/**
 * A consistent online copy: `VACUUM INTO` on a connection of its own reads one snapshot of the database (WAL mode lets
 * it read while the server writes) and writes a compact copy. The server's group commit acknowledges a write only
 * after its commit, so every write acknowledged before the copy starts is in it. (The online backup API would restart
 * its copy each time the server commits, which under steady load is always.)
 */
export async function backupEmbedded(options: BackupOptions): Promise<BackupResult> {
  const source = join(options.dataDir, SQLITE_FILE);
  if (!existsSync(source)) throw new BackupError(`no embedded database at ${source} (set HERALD_DATA_DIR to the data directory)`);
  const target = resolve(options.to);
  if (existsSync(target)) throw new BackupError(`${target} already exists; choose a new file name`);
  mkdirSync(dirname(target), { recursive: true });
  const staging = mkdtempSync(join(dirname(target), `.${basename(target)}.`));
  try {
    const copy = join(staging, SQLITE_FILE);
    const sqlite = new BetterSqlite3(source, { readonly: true, fileMustExist: true, timeout: 10_000 });
    try {
      sqlite.prepare('vacuum into ?').run(copy);
    } finally {
      sqlite.close();
    }
    const keyFile = join(options.dataDir, KEY_FILE);
    const includeKey = options.includeKey && !options.keyFromEnvironment && existsSync(keyFile);
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      createdAt: new Date().toISOString(),
      schema: lastMigration(copy),
      includesEncryptionKey: includeKey,
    };
    const entries: TarEntry[] = [
      { name: MANIFEST, mode: 0o644, source: { content: Buffer.from(JSON.stringify(manifest, null, 2) + '\n') } },
      { name: SQLITE_FILE, mode: 0o600, source: { path: copy } },
    ];
    if (includeKey) entries.push({ name: KEY_FILE, mode: 0o600, source: { content: readFileSync(keyFile) } });
    const partial = join(staging, 'archive.partial');
    await pipeline(Readable.from(tarStream(entries)), createGzip(), createWriteStream(partial, { mode: 0o600 }));
    const fd = openSync(partial, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(partial, target);
    const keyNote = includeKey
      ? 'the backup includes the encryption key: keep it as secret as the key itself'
      : options.keyFromEnvironment
        ? 'the encryption key comes from HERALD_ENCRYPTION_KEY and is NOT in the backup: keep it separately, the restored credentials cannot be read without it'
        : `the encryption key (${keyFile}) is NOT in the backup: keep it separately, the restored credentials cannot be read without it`;
    return { file: target, bytes: statSync(target).size, manifest, keyNote };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

export interface RestoreResult {
  dataDir: string;
  manifest: BackupManifest;
  keyNote: string;
}

/**
 * Restores an archive into an empty (or new) data directory. Refuses a directory a running server holds (checked
 * first, as such a directory is never empty and the reason matters) and any non-empty one: a restore never mixes with
 * or overwrites data.
 */
export async function restoreEmbedded(options: { from: string; dataDir: string }): Promise<RestoreResult> {
  const dataDir = resolve(options.dataDir);
  const from = resolve(options.from);
  if (!existsSync(from)) throw new BackupError(`${from} does not exist`);
  if (existsSync(dataDir)) {
    const inUse = dataDirInUse(dataDir);
    if (inUse) throw new BackupError(`refusing to restore: ${inUse}; stop it, then restore into a new, empty data directory`);
    if (!isEmptyDir(dataDir)) throw new BackupError(`refusing to restore: ${dataDir} is not empty; restore into a new or empty data directory`);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const staging = mkdtempSync(join(dataDir, '.restore-'));
  try {
    const allowed = new Set([MANIFEST, SQLITE_FILE, KEY_FILE]);
    const names = await readTar(createReadStream(from).pipe(createGunzip()), (name) => {
      if (!allowed.has(name)) throw new BackupError(`${from} is not a Herald backup (unexpected entry ${name})`);
      return createWriteStream(join(staging, name), { mode: 0o600 });
    }).catch((error: unknown) => {
      if (error instanceof BackupError) throw error;
      throw new BackupError(`${from} is not a readable Herald backup: ${error instanceof Error ? error.message : String(error)}`);
    });
    if (!names.includes(MANIFEST) || !names.includes(SQLITE_FILE)) throw new BackupError(`${from} is not a Herald backup (no manifest or database)`);
    const manifest = JSON.parse(readFileSync(join(staging, MANIFEST), 'utf8')) as BackupManifest;
    if (manifest.format !== BACKUP_FORMAT || manifest.version > BACKUP_VERSION) {
      throw new BackupError(`${from} is not a backup this Herald can restore (format ${manifest.format} version ${manifest.version})`);
    }
    const check = new BetterSqlite3(join(staging, SQLITE_FILE), { fileMustExist: true });
    try {
      const result = check.pragma('quick_check', { simple: true });
      if (result !== 'ok') throw new BackupError(`the database in ${from} is damaged: ${String(result)}`);
    } finally {
      check.close();
    }
    const hasKey = names.includes(KEY_FILE);
    if (hasKey) renameSync(join(staging, KEY_FILE), join(dataDir, KEY_FILE));
    renameSync(join(staging, SQLITE_FILE), join(dataDir, SQLITE_FILE));
    const keyNote = hasKey
      ? `the encryption key was restored into ${join(dataDir, KEY_FILE)} (HERALD_ENCRYPTION_KEY, when set, takes precedence)`
      : `the backup has no encryption key: start Herald with the original key (HERALD_ENCRYPTION_KEY or ${join(dataDir, KEY_FILE)}), or the stored credentials cannot be read`;
    return { dataDir, manifest, keyNote };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function lastMigration(file: string): string | null {
  const sqlite = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const row = sqlite.prepare("select name from kysely_migration order by name desc limit 1").get() as { name: string } | undefined;
    return row?.name ?? null;
  } catch {
    return null;
  } finally {
    sqlite.close();
  }
}
