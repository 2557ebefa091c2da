import type { User } from '../../domain/dashboard.js';
import type { Environment } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import type { DashboardSession } from './authenticate-dashboard-session.js';
import { presentUser } from './user-view.js';

export interface DashboardProfile {
  user: User;
  organization: { _id: string; name: string };
  environments: Array<{ _id: string; name: string; identifier?: string }>;
  csrfToken: string;
}

/** What the dashboard loads first: who is signed in, their organization and its environments. */
export async function getDashboardProfile(deps: Pick<Deps, 'store'>, session: DashboardSession): Promise<DashboardProfile> {
  const organizationId = session.user._organizationId;
  const organization = await deps.store.dashboard.getOrganization(organizationId);
  const environments = (await deps.store.tenancy.listEnvironments()).filter((env) => env._organizationId === organizationId);
  return {
    user: presentUser(session.user),
    organization: { _id: organizationId, name: organization?.name ?? '' },
    environments: environments.map(environmentSummary),
    csrfToken: session.csrfToken,
  };
}

/** With `identifier`, the Inbox application identifier. */
function environmentSummary(environment: Environment): { _id: string; name: string; identifier?: string } {
  return { _id: environment._id, name: environment.name, ...(environment.identifier ? { identifier: environment.identifier } : {}) };
}
