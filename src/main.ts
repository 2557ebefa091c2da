import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from './config.js';
import { createContainer, type Container, type ContainerOptions } from './container.js';
import { buildApp } from './http/app.js';
import { Lifecycle, drainHttp } from './http/lifecycle.js';
import { bootstrapTenancy } from './usecases/tenancy/bootstrap-tenancy.js';
import { announceKeys, announceStart } from './first-start.js';
import { createWorker, type Worker, type WorkerOptions } from './worker/worker.js';
import { openEmbeddedDataDir } from './store/sqlite/open-data-dir.js';
import { loopSaturation } from './worker/loop-saturation.js';
import { requestBurst } from './worker/request-burst.js';
import { SqlQueue } from './queue/sql-queue.js';
import type { JobQueue } from './queue/ports.js';

/**
 * Embedded mode: API and worker in one process over the SQLite file and the durable in-process queue.
 * Returns a handle whose `stop()` drains HTTP and then the worker within `config.shutdownTimeoutMs` (SIGTERM does the same).
 */
export interface RunningServer {
  app: FastifyInstance;
  container: Container;
  worker: Worker;
  url: string;
  stop(): Promise<void>;
}

export async function startServer(
  config: Config = loadConfig(),
  options: { worker?: WorkerOptions; container?: ContainerOptions } = {},
): Promise<RunningServer> {
  const dataDir = config.databaseUrl ? undefined : openEmbeddedDataDir(config.dataDir);
  const container = await createContainer(config, options.container);
  const { deps } = container;
  dataDir?.report(deps.logger);
  const boot = await bootstrapTenancy(deps, { bootstrapSecretKey: config.bootstrapSecretKey });
  announceKeys(deps, config, boot);
  const lifecycle = new Lifecycle();
  const app = await buildApp(deps, { logger: deps.logger, realtime: container.realtime, lifecycle, readers: container.readers });
  const url = await app.listen({ host: config.host, port: config.port });
  deps.logger.info({ url, dataDir: config.databaseUrl ? undefined : config.dataDir }, 'Herald listening');
  await announceStart(deps, config, boot, url);
  const stopSharing = shareCpuWithApi(app, deps.queue, config);
  const worker = createWorker(deps, options.worker);
  await worker.start();
  lifecycle.ready();

  let stopping: Promise<void> | undefined;
  // Within HERALD_SHUTDOWN_TIMEOUT_MS: HTTP drains first (its requests enqueue jobs), the worker's running jobs get
  // what is left (unfinished ones go back to the queue, durable), then everything closes.
  const stop = () =>
    (stopping ??= (async () => {
      const deadline = Date.now() + config.shutdownTimeoutMs;
      await drainHttp(app, lifecycle, deadline);
      await worker.stop({ graceMs: Math.max(0, deadline - Date.now()) });
      stopSharing();
      await container.close();
      dataDir?.release();
    })());
  return { app, container, worker, url, stop };
}

/** The API counts as serving while this many requests arrived within this window (a burst, not a lone poll). */
const SERVING_WINDOW_MS = 20;
const SERVING_MIN_REQUESTS = 3;

/**
 * One process runs both: while requests arrive in a burst and the event loop is saturated, the worker runs fewer jobs
 * at once (config `worker.concurrencyWhileServing`), so the API keeps the CPU; the jobs wait as durable rows and run
 * once the burst ends. A loop with room to spare (jobs waiting on slow providers) limits nothing, and neither does a
 * lone request (a poll) while the worker alone saturates the loop.
 */
function shareCpuWithApi(app: FastifyInstance, queue: JobQueue, config: Config): () => void {
  const concurrency = config.worker.concurrencyWhileServing;
  if (!(queue instanceof SqlQueue) || concurrency === 0) return () => undefined;
  const requests = requestBurst({ count: SERVING_MIN_REQUESTS, windowMs: SERVING_WINDOW_MS });
  app.server.on('request', () => requests.arrived(performance.now()));
  const loop = loopSaturation();
  queue.shareWith(() => requests.active(performance.now()) && loop.saturated(), concurrency);
  return loop.stop;
}
