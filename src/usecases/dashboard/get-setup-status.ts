import type { Deps } from '../deps.js';

/** Whether the dashboard still needs its first admin (the setup page shows its form only then). */
export async function getSetupStatus(deps: Pick<Deps, 'store'>): Promise<{ required: boolean }> {
  return { required: (await deps.store.dashboard.countUsers()) === 0 };
}
