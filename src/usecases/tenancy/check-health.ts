import type { Deps } from '../deps.js';

export interface Health {
  status: 'ok' | 'degraded';
  checks: Record<string, { status: 'up' | 'down'; error?: string }>;
}

/** Pings every dependency that can be down (the database; the queue where it is remote). */
export async function checkHealth(deps: Pick<Deps, 'store'> & { extraChecks?: Record<string, () => Promise<void>> }): Promise<Health> {
  const probes: Record<string, () => Promise<void>> = { storage: () => deps.store.ping(), ...(deps.extraChecks ?? {}) };
  const checks: Health['checks'] = {};
  await Promise.all(
    Object.entries(probes).map(async ([name, probe]) => {
      try {
        await probe();
        checks[name] = { status: 'up' };
      } catch (error) {
        checks[name] = { status: 'down', error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  const status = Object.values(checks).every((c) => c.status === 'up') ? 'ok' : 'degraded';
  return { status, checks };
}
