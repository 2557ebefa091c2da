import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { buildApp } from './http/app.js';
import { Lifecycle, drainHttp } from './http/lifecycle.js';
import { bootstrapTenancy } from './usecases/tenancy/bootstrap-tenancy.js';
import { printSetupLink } from './usecases/dashboard/print-setup-link.js';

/**
 * Scale-out API process: HTTP only. Triggers are enqueued on BullMQ for the worker processes; the
 * schema must already be current (`herald migrate`). `stop()` (SIGTERM) drains HTTP within `config.shutdownTimeoutMs`, then closes.
 */
export interface RunningApi {
  app: FastifyInstance;
  container: Container;
  url: string;
  stop(): Promise<void>;
}

/** Separate API and worker processes only make sense over shared PostgreSQL and Redis. */
export function requireScaleoutConfig(config: Config, command: string): void {
  if (!config.databaseUrl || !config.redisUrl) {
    throw new ConfigError(`herald ${command} needs DATABASE_URL and REDIS_URL (use "herald start" for the embedded server)`);
  }
}

export async function startApi(config: Config = loadConfig()): Promise<RunningApi> {
  requireScaleoutConfig(config, 'api');
  const container = await createContainer(config, { migrate: false });
  const { deps } = container;
  try {
    const boot = await bootstrapTenancy(deps, { bootstrapSecretKey: config.bootstrapSecretKey });
    if (boot.created) {
      for (const [environment, secretKey] of Object.entries(boot.keys)) {
        // Printed once, by the first process to start: the key is stored hashed and cannot be shown again.
        deps.logger.info(
          { environment, secretKey, applicationIdentifier: boot.identifiers[environment] },
          `secret key and application identifier of the ${environment} environment (the key is shown once)`,
        );
      }
    }
    const lifecycle = new Lifecycle();
    const app = await buildApp(deps, { logger: deps.logger, realtime: container.realtime, lifecycle });
    const url = await app.listen({ host: config.host, port: config.port });
    deps.logger.info({ url }, 'Herald API listening');
    await printSetupLink(deps, url);
    lifecycle.ready();
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        await drainHttp(app, lifecycle, Date.now() + config.shutdownTimeoutMs);
        await container.close();
      })());
    return { app, container, url, stop };
  } catch (error) {
    await container.close();
    throw error;
  }
}
