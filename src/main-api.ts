import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { buildApp } from './http/app.js';
import { Lifecycle, drainHttp } from './http/lifecycle.js';
import { bootstrapTenancy } from './usecases/tenancy/bootstrap-tenancy.js';
import { announceKeys, announceStart } from './first-start.js';

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
  // Its requests' PostgreSQL results continue together, a turn's at a time (store/postgres/result-gathering.ts).
  const container = await createContainer(config, { migrate: false, gatherQueryResults: true });
  const { deps } = container;
  try {
    // The keys are announced once, by the first process to start: they are stored hashed and cannot be shown again.
    const boot = await bootstrapTenancy(deps, { bootstrapSecretKey: config.bootstrapSecretKey });
    announceKeys(deps, config, boot);
    const lifecycle = new Lifecycle();
    const app = await buildApp(deps, { logger: deps.logger, realtime: container.realtime, lifecycle });
    const url = await app.listen({ host: config.host, port: config.port });
    deps.logger.info({ url }, 'Herald API listening');
    await announceStart(deps, config, boot, url);
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
