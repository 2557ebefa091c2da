import { loadConfig, type Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { requireScaleoutConfig } from './main-api.js';
import { createWorker, type Worker } from './worker/worker.js';

/**
 * Scale-out worker process: no HTTP, consumes the BullMQ queue. Any number can run side by side;
 * `stop()` (SIGTERM) stops taking jobs, lets running ones finish within HERALD_SHUTDOWN_TIMEOUT_MS, returns the rest.
 */
export interface RunningWorker {
  container: Container;
  worker: Worker;
  stop(options?: { graceMs?: number }): Promise<void>;
}

export async function startWorker(config: Config = loadConfig()): Promise<RunningWorker> {
  requireScaleoutConfig(config, 'worker');
  const container = await createContainer(config, { migrate: false });
  const worker = createWorker(container.deps);
  try {
    await worker.start();
  } catch (error) {
    await container.close();
    throw error;
  }
  container.deps.logger.info({ concurrency: config.worker.concurrency }, 'Herald worker consuming jobs');
  let stopping: Promise<void> | undefined;
  const stop = (options: { graceMs?: number } = {}) =>
    (stopping ??= (async () => {
      await worker.stop({ graceMs: options.graceMs ?? config.shutdownTimeoutMs });
      await container.close();
    })());
  return { container, worker, stop };
}
