import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from './config.js';
import { createContainer, type Container, type ContainerOptions } from './container.js';
import { buildApp } from './http/app.js';
import { bootstrapTenancy } from './usecases/tenancy/bootstrap-tenancy.js';
import { printSetupLink } from './usecases/dashboard/print-setup-link.js';
import { createWorker, type Worker, type WorkerOptions } from './worker/worker.js';
import { openEmbeddedDataDir } from './store/sqlite/open-data-dir.js';

/**
 * Embedded mode: API and worker in one process over the SQLite file and the durable in-process queue.
 * Returns a handle whose `stop()` drains HTTP and then the worker (SIGTERM does the same).
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
  if (boot.created) {
    for (const [environment, secretKey] of Object.entries(boot.keys)) {
      // Printed once, on the first start only: the key is stored hashed and cannot be shown again.
      deps.logger.info(
        { environment, secretKey, applicationIdentifier: boot.identifiers[environment] },
        `secret key and application identifier of the ${environment} environment (the key is shown once)`,
      );
    }
  }
  const app = await buildApp(deps, { logger: deps.logger, realtime: container.realtime });
  const url = await app.listen({ host: config.host, port: config.port });
  deps.logger.info({ url, dataDir: config.databaseUrl ? undefined : config.dataDir }, 'Herald listening');
  await printSetupLink(deps, url);
  const worker = createWorker(deps, options.worker);
  await worker.start();

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await app.close();
      await worker.stop();
      await container.close();
      dataDir?.release();
    })());
  return { app, container, worker, url, stop };
}
