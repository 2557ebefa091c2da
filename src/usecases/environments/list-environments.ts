import { NotFoundError } from '../../domain/errors.js';
import type { Caller, Environment } from '../../domain/types.js';
import type { Deps } from '../deps.js';

/** The caller's own environment (`GET /v1/environments/me`). */
export async function getCurrentEnvironment(deps: Pick<Deps, 'store'>, caller: Caller): Promise<Environment> {
  const environment = await deps.store.tenancy.getEnvironment(caller.environmentId);
  if (!environment) throw NotFoundError.entity('Environment', caller.environmentId);
  return environment;
}

/** Every environment of the caller's organization, oldest first (`GET /v1/environments`). */
export async function listEnvironments(deps: Pick<Deps, 'store'>, caller: Caller): Promise<Environment[]> {
  const environments = await deps.store.tenancy.listEnvironments();
  return environments.filter((environment) => environment._organizationId === caller.organizationId);
}
