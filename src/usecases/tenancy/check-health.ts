import type { Deps } from '../deps.js';

export interface Health {
  status: 'ok' | 'degraded';
  checks: Record<string, { status: 'up' | 'down' }>;
}

/**
 * Pings every dependency that can be down: the database and the queue (Redis in scale-out; the same
 * database in embedded mode). The public answer says only up or down; the reason goes to the log, since
 * driver messages can name hosts and users.
 */
export async function checkHealth(deps: Pick<Deps, 'store' | 'queue' | 'logger'>): Promise<Health> {
  const probes: Record<string, () => Promise<void>> = { storage: () => deps.store.ping(), queue: () => deps.queue.ping() };
  const checks: Health['checks'] = {};
  await Promise.all(
    Object.entries(probes).map(async ([name, probe]) => {
      try {
        await probe();
        checks[name] = { status: 'up' };
      } catch (error) {
        deps.logger.warn({ check: name, err: error }, 'health check failed');
        checks[name] = { status: 'down' };
      }
    }),
  );
  const status = Object.values(checks).every((c) => c.status === 'up') ? 'ok' : 'degraded';
  return { status, checks };
}
