import type { Deps } from '../../src/usecases/deps.js';
import { createUser } from '../../src/usecases/dashboard/create-user.js';

/** The benchmark's dashboard admin, created the way `herald users create` does. */
export async function createDashboardAdmin(deps: Deps, input: { email: string; password: string }): Promise<void> {
  await createUser(deps, deps.store, { ...input, role: 'admin' });
}
