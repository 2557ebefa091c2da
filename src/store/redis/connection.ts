import { Redis, type RedisOptions } from 'ioredis';
import { UnavailableError } from '../../domain/errors.js';

/**
 * Redis connections for scale-out mode. Two kinds:
 * - `command`: for the API side (idempotency, rate limits, enqueuing). It fails fast while Redis is
 *   down (no offline queue, one retry, a command timeout) so a request answers 503 instead of hanging.
 * - `worker`: for BullMQ workers, whose blocking commands need `maxRetriesPerRequest: null`.
 * Both reconnect by themselves, so the process recovers when Redis comes back.
 */
export type RedisConnectionKind = 'command' | 'worker';

export function openRedis(url: string, kind: RedisConnectionKind): Redis {
  const common: RedisOptions = {
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  };
  const options: RedisOptions =
    kind === 'command'
      ? { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 5000 }
      : { ...common, maxRetriesPerRequest: null };
  const client = new Redis(url, options);
  // Connection errors surface on commands (as 503s); an unhandled 'error' event must not crash the process.
  client.on('error', () => undefined);
  return client;
}

/** Resolves once the client is ready; throws when it is not within `timeoutMs` (start-up check). */
export async function waitUntilReady(client: Redis, timeoutMs = 5000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new UnavailableError(`Redis is unreachable (no connection within ${timeoutMs} ms)`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
  });
}

const CONNECTION_FAILURE =
  /enableOfflineQueue|max retries per request|Connection is closed|Command timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Stream isn't writeable/i;

/** A lost-connection error from ioredis or BullMQ becomes the domain's UnavailableError (503 + Retry-After). */
export function toUnavailable(error: unknown, client?: Redis): unknown {
  if (error instanceof UnavailableError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string } | undefined)?.code ?? '';
  if (CONNECTION_FAILURE.test(message) || CONNECTION_FAILURE.test(code) || (client && client.status !== 'ready')) {
    return new UnavailableError('Service temporarily unavailable: the queue/cache backend cannot be reached');
  }
  return error;
}

/** Runs a Redis operation, translating connection failures into UnavailableError. */
export async function guarded<T>(client: Redis, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw toUnavailable(error, client);
  }
}
