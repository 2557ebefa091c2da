import { loadConfig, type Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { requireScaleoutConfig } from './main-api.js';
import { createWorker, type Worker } from './worker/worker.js';
import { serveMetrics, type MetricsServer } from './observability/metrics-server.js';
import { lowerProcessPriority } from './worker/process-priority.js';

/**
 * Scale-out worker process: no HTTP, consumes the BullMQ queue. Any number can run side by side;
 * `stop()` (SIGTERM) stops taking jobs, lets running ones finish within HERALD_SHUTDOWN_TIMEOUT_MS, returns the rest.
 */
export interface RunningWorker {
  container: Container;
  worker: Worker;
  /** `GET /metrics` on HERALD_METRICS_PORT (the worker has no other HTTP server); undefined when that is unset. */
  metricsUrl?: string;
  stop(options?: { graceMs?: number }): Promise<void>;
}

export async function startWorker(config: Config = loadConfig()): Promise<RunningWorker> {
  requireScaleoutConfig(config, 'worker');
  const nice = lowerProcessPriority(config.worker.nice);
  const container = await createContainer(config, { migrate: false });
  const worker = createWorker(container.deps);
  let metricsServer: MetricsServer | undefined;
  try {
    if (config.metrics.enabled && config.metrics.workerPort !== undefined) {
      metricsServer = await serveMetrics(container.deps.metrics, { host: config.host, port: config.metrics.workerPort, token: config.metrics.token });
      container.deps.logger.info({ url: metricsServer.url }, 'Herald worker metrics listening');
    }
    await worker.start();
  } catch (error) {
    await metricsServer?.close();
    await container.close();
    throw error;
  }
  container.deps.logger.info({ concurrency: config.worker.concurrency, nice }, 'Herald worker consuming jobs');
  let stopping: Promise<void> | undefined;
  const stop = (options: { graceMs?: number } = {}) =>
    (stopping ??= (async () => {
      await worker.stop({ graceMs: options.graceMs ?? config.shutdownTimeoutMs });
      await metricsServer?.close();
      await container.close();
    })());
  return { container, worker, metricsUrl: metricsServer?.url, stop };
}
