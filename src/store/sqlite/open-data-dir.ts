import { mkdirSync } from 'node:fs';
import type { Logger } from '../../usecases/deps.js';
import { holdDataDir, prepareAutoVacuum, SQLITE_FILE, VACUUM_ON_START_MAX_BYTES, type AutoVacuumState } from './storage.js';

/**
 * The embedded server's start on its data directory: marks it held (herald.pid, for `herald restore` and
 * `herald vacuum`) and switches an older database file to incremental auto-vacuum (storage.ts).
 */
export function openEmbeddedDataDir(dataDir: string): { report(logger: Logger): void; release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const release = holdDataDir(dataDir);
  let state: AutoVacuumState;
  try {
    state = prepareAutoVacuum(dataDir);
  } catch (error) {
    release();
    throw error;
  }
  return {
    report(logger) {
      if (state === 'switched') logger.info({ file: SQLITE_FILE }, 'database switched to incremental auto-vacuum (a one-time VACUUM)');
      if (state === 'too-large') {
        logger.warn(
          { file: SQLITE_FILE, limitMb: VACUUM_ON_START_MAX_BYTES / 1024 / 1024 },
          'the database predates incremental auto-vacuum and is too large to switch at start: space freed by retention is reused but not given back to the file system until "herald vacuum" runs while Herald is stopped',
        );
      }
    },
    release,
  };
}
