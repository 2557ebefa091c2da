import type { Deps } from '../deps.js';

/**
 * Endpoint changes reach every process's cache of "does this environment have endpoints" (EventOutbox.wanted) over the
 * channel that already tells every process about revoked API keys (KeyRevocations: in-process embedded, Redis pub/sub
 * scaled out), under a prefix that no key hash has. A process that cannot hear it does not trust its cache.
 */
const PREFIX = 'webhook-endpoints:';

export async function announceEndpointsChanged(deps: Pick<Deps, 'keyRevocations' | 'store'>, environmentId: string): Promise<void> {
  deps.store.events.forget(environmentId);
  await deps.keyRevocations.publish(PREFIX + environmentId);
}

/** The KeyRevocations listener that drops cached answers: one environment's, or all after missed announcements. */
export function webhookPresenceListener(cache: { forget(environmentId?: string): void }): (announced: string | undefined) => void {
  return (announced) => {
    if (announced === undefined) cache.forget();
    else if (announced.startsWith(PREFIX)) cache.forget(announced.slice(PREFIX.length));
  };
}
