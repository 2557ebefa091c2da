import { isoNow } from '../../domain/clock.js';
import type { StoredUser } from '../../domain/dashboard.js';
import { NotFoundError, UnauthorizedError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller, Environment } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { csrfTokenFor, hashOpaqueToken } from './opaque-tokens.js';

export interface DashboardSession {
  caller: Caller;
  user: StoredUser;
  /** What a state-changing request of this session must send as X-CSRF-Token. */
  csrfToken: string;
}

export interface AuthenticateDashboardSessionInput {
  sessionToken: string;
  /** The `Novu-Environment-Id` header: an environment of the user's organization; default development. */
  environmentId?: string;
}

/**
 * A session cookie → a dashboard caller acting in one environment of the user's organization. The user's role is
 * read with the session on every request, so a role change or a deleted user takes effect at once.
 */
export async function authenticateDashboardSession(
  deps: Pick<Deps, 'store' | 'clock' | 'sessionSecret'>,
  input: AuthenticateDashboardSessionInput,
): Promise<DashboardSession> {
  const found = await deps.store.dashboard.findSession(hashOpaqueToken(input.sessionToken), isoNow(deps.clock));
  if (!found) throw new UnauthorizedError('Session expired or signed out');
  const { user } = found;
  const environment = await chooseEnvironment(deps, user._organizationId, input.environmentId);
  return {
    caller: { kind: 'dashboard', environmentId: environment._id, organizationId: user._organizationId, actorId: user._id, role: user.role },
    user,
    csrfToken: csrfTokenFor(deps.sessionSecret, input.sessionToken),
  };
}

async function chooseEnvironment(deps: Pick<Deps, 'store'>, organizationId: string, environmentId: string | undefined): Promise<Environment> {
  if (environmentId !== undefined) {
    const environment = isRecordId(environmentId) ? await deps.store.tenancy.getEnvironment(environmentId) : undefined;
    // Another organization's environment is as unknown as a made-up id.
    if (!environment || environment._organizationId !== organizationId) throw NotFoundError.entity('Environment', environmentId);
    return environment;
  }
  const environments = (await deps.store.tenancy.listEnvironments()).filter((env) => env._organizationId === organizationId);
  const chosen = environments.find((env) => env.name === 'development') ?? environments[0];
  if (!chosen) throw new NotFoundError('The organization has no environment');
  return chosen;
}
