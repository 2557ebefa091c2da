import type { Config } from '../config.js';
import { createContainer, type Container } from '../container.js';
import { createWorker, type Worker } from '../worker/worker.js';
import { lowerProcessPriority } from '../worker/process-priority.js';

/**
 * SPIKE (issue 24, session 26, h/emb-split): not production code, opt-in only.
 *
 * `HERALD_SPIKE_SPLIT_DRAIN=drain herald start`: a process with no HTTP that opens the embedded data directory's SQLite
 * file with a connection of its own (WAL mode lets it write beside the API process's connection, one writer at a time)
 * and runs the embedded worker (SqlQueue + createWorker) over it, woken only by its poll (HERALD_QUEUE_POLL_MS). The
 * API runs with `HERALD_SPIKE_SPLIT_DRAIN=api` (src/main.ts: its worker is not started, so every job it enqueues waits as
 * a row for a drain process to claim). What this leaves out, which a real split would need (BENCHMARKS.md, session
 * 26, "the drain on another core"): Inbox events from the drain to the API's sockets (they go to this process's own
 * hub, which has no sockets), cache invalidation across the processes (workflows, keys, webhook presence), the data
 * directory's lock, a wake-up from the API instead of the poll, checkpoints and backups coordinated between processes.
 */
export interface SpikeDrain {
  container: Container;
  worker: Worker;
  stop(): Promise<void>;
}

export async function startSpikeDrain(config: Config): Promise<SpikeDrain> {
  // The API process migrated the file and runs the background checkpoints; the drain's connection keeps SQLite's own
  // automatic checkpoint (wal_autocheckpoint) as every connection does.
  // Like `herald worker`: HERALD_WORKER_NICE (default 19), so that during a burst the API keeps the CPU.
  const nice = lowerProcessPriority(config.worker.nice);
  const container = await createContainer({ ...config, sqliteCheckpointMs: 0 }, { migrate: false });
  const worker = createWorker(container.deps);
  await worker.start();
  container.deps.logger.info({ concurrency: config.worker.concurrency, nice, pollMs: config.worker.pollIntervalMs, pid: process.pid }, 'spike drain consuming jobs');
  // Nothing else holds the event loop open (the queue's timers are unref'd; the server's socket does it in `herald start`).
  const keepAlive = setInterval(() => undefined, 60_000);
  // A line the bench waits for (the logger may be at warn).
  console.log(`spike drain ready ${process.pid}`);
  let stopping: Promise<void> | undefined;
  return {
    container,
    worker,
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(keepAlive);
        await worker.stop({ graceMs: config.shutdownTimeoutMs });
        await container.close();
      })()),
  };
}
