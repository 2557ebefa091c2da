import { loadConfig, type Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { requireScaleoutConfig } from './main-api.js';
import { createWorker, type Worker } from './worker/worker.js';
import { serveMetrics, type MetricsServer } from './observability/metrics-server.js';
import { lowerProcessPriority } from './worker/process-priority.js';
import { startCpuYield, yieldsCpu } from './worker/cpu-yield.js';

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
  let cpuYield: { stop(): void } | undefined;
  try {
    if (config.metrics.enabled && config.metrics.workerPort !== undefined) {
      metricsServer = await serveMetrics(container.deps.metrics, { host: config.host, port: config.metrics.workerPort, token: config.metrics.token });
      container.deps.logger.info({ url: metricsServer.url }, 'Herald worker metrics listening');
    }
    await worker.start();
    cpuYield = yieldCpuWhenStarved(container, config, nice);
  } catch (error) {
    await metricsServer?.close();
    await container.close();
    throw error;
  }
  container.deps.logger.info(
    { concurrency: config.worker.concurrency, nice, yieldConcurrency: cpuYield ? config.worker.yieldConcurrency : 0 },
    'Herald worker consuming jobs',
  );
  let stopping: Promise<void> | undefined;
  const stop = (options: { graceMs?: number } = {}) =>
    (stopping ??= (async () => {
      cpuYield?.stop();
      await worker.stop({ graceMs: options.graceMs ?? config.shutdownTimeoutMs });
      await metricsServer?.close();
      await container.close();
    })());
  return { container, worker, metricsUrl: metricsServer?.url, stop };
}

/** A starved sample is one of this many ms; the worker yields for HOLD_MS after the last one. */
const YIELD_SAMPLE_MS = 250;
const YIELD_HOLD_MS = 750;

/**
 * While this process's thread waits for the CPU, the worker runs `worker.yieldConcurrency` jobs at once instead of
 * `worker.concurrency` (src/worker/cpu-yield.ts; docs/scale-out.md). Only a niced worker yields: at niceness 0 it was
 * told not to give way to what shares its host (configuration.md, HERALD_WORKER_NICE).
 */
function yieldCpuWhenStarved(container: Container, config: Config, nice: number): { stop(): void } | undefined {
  const { queue } = container.deps;
  const { concurrency, yieldConcurrency, yieldThreshold, yieldMaxMs } = config.worker;
  // Through the port: importing the BullMQ queue here would load BullMQ into an embedded `herald start`.
  const setConcurrency = queue.setConcurrency?.bind(queue);
  if (!setConcurrency || !yieldsCpu(config.worker, nice)) return undefined;
  return startCpuYield(setConcurrency, {
    concurrency,
    floor: yieldConcurrency,
    threshold: yieldThreshold,
    holdMs: YIELD_HOLD_MS,
    maxYieldMs: yieldMaxMs,
    sampleMs: YIELD_SAMPLE_MS,
  });
}
