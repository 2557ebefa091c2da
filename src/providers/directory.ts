import type { Config } from '../config.js';
import type { DeliveryChannel } from '../domain/types.js';
import type { ProviderDirectory } from './ports.js';
import { getDeliveryProvider } from './registry.js';
import { createGuardedDispatcher, createProviderContext } from './outbound.js';

/** The ProviderDirectory over the registry, with the outbound guard configured from config. */
export function createProviderDirectory(config: Config): ProviderDirectory {
  // One connection pool for every send, so keep-alive connections to a vendor are reused across messages.
  const dispatcher = createGuardedDispatcher(config.outbound.allow);
  return {
    get: (providerId: string, channel: DeliveryChannel) =>
      channel === 'in_app' ? undefined : getDeliveryProvider(providerId, channel),
    context: (options = {}) =>
      createProviderContext({
        timeoutMs: options.timeoutMs ?? config.outbound.timeoutMs,
        userAgent: config.outbound.userAgent,
        allow: config.outbound.allow,
        dispatcher,
      }),
  };
}
