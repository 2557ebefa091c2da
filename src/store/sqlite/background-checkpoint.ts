import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside the commit that crosses
 * `wal_autocheckpoint`, on the committing connection: embedded, that is the event loop, which then copies the WAL's
 * pages into the database file and waits for two fsyncs (the WAL's, the file's) while every request waits. Under a
 * burst of triggers that was a 10-130 ms block every ~10,000 WAL pages (a few times a second), the largest part of the
 * trigger p99 (BENCHMARKS.md, session 16). A second connection on a worker thread runs a PASSIVE checkpoint every
 * `intervalMs`: it copies what is committed while the main connection keeps writing (a checkpoint takes no writer
 * lock), and fsyncs off the event loop. The main connection keeps its own automatic checkpoint as the backstop that
 * restarts the WAL (only a writer can restart it, and only once every frame is copied); it then finds the pages copied
 * already and has only the last interval's left.
 *
 * The thread holds no lock between passes and writes nothing of its own, so durability is unchanged: a checkpoint only
 * moves committed pages from the WAL into the file.
 */
export interface BackgroundCheckpointer {
  /** Runs a pass now, on the thread, and resolves with its outcome (tests). */
  checkpointNow(): Promise<CheckpointPass>;
  /** Stops the thread and closes its connection (before the main connection closes, so that one runs the last checkpoint). */
  stop(): Promise<void>;
}

// CommonJS evaluated in the thread: no loader needed for TypeScript, and it loads only better-sqlite3.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlite3);
const db = new Database(workerData.file, { fileMustExist: true });
// The checkpoint's fsyncs as on the main connection (synchronous = NORMAL syncs the WAL and the file in a checkpoint).
db.pragma('synchronous = NORMAL');
const pass = (asked) => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ pass: result, asked });
  } catch (error) {
    // Busy (another checkpoint running) or the file went away: the next pass tries again.
    parentPort.postMessage({ error: String(error && error.message || error), asked });
  }
};
const timer = setInterval(() => pass(false), workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'pass') pass(true);
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface CheckpointPass {
  busy: number;
  /** Frames in the WAL, and frames copied into the file so far. */
  log: number;
  checkpointed: number;
}

export function startBackgroundCheckpoints(
  file: string,
  options: { intervalMs: number; onPass?: (pass: CheckpointPass) => void; onError?: (message: string) => void },
): BackgroundCheckpointer {
  const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { file, intervalMs: options.intervalMs, betterSqlite3 },
    // A small heap: the thread holds one connection and a timer.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
  });
  // Never keeps the process alive; a thread that dies leaves the main connection's own checkpoint doing the work.
  worker.unref();
  const asked: Array<{ resolve(pass: CheckpointPass): void; reject(error: Error): void }> = [];
  worker.on('message', (message: { pass?: CheckpointPass; error?: string; asked: boolean }) => {
    if (message.pass) options.onPass?.(message.pass);
    if (message.error) options.onError?.(message.error);
    if (!message.asked) return;
    const waiter = asked.shift();
    if (message.pass) waiter?.resolve(message.pass);
    else waiter?.reject(new Error(message.error));
  });
  worker.on('error', (error) => options.onError?.(error.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let stopping: Promise<void> | undefined;
  return {
    checkpointNow: () =>
      new Promise<CheckpointPass>((resolve, reject) => {
        asked.push({ resolve, reject });
        worker.postMessage('pass');
      }),
    stop: () => (stopping ??= (async () => {
      // Held while it stops: unref'd, the thread did not keep the process alive until its exit, so a caller awaiting
      // stop() with nothing else pending (a bench closing its container, the CLI's shutdown) saw the process end
      // there, the rest of its work not done (bench:inbox exited 0 after its first part).
      worker.ref();
      worker.postMessage('stop');
      await exited;
    })()),
  };
}
