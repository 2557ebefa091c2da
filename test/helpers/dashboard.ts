import type { UserRole } from '../../src/domain/types.js';
import { createUser } from '../../src/usecases/dashboard/create-user.js';
import { createSetupLink } from '../../src/usecases/dashboard/create-setup-link.js';
import type { TestResponse, TestServer } from './test-server.js';

/** A signed-in dashboard browser, reduced to what it sends: the session cookie and the CSRF token. */
export interface DashboardSignIn {
  cookie: string;
  csrfToken: string;
  user: { _id: string; email: string; role: UserRole };
  /** The raw Set-Cookie header of the sign-in. */
  setCookie: string;
}

export const TEST_PASSWORD = 'correct horse battery';

/** Creates a user directly through the use-case (the way the CLI does). */
export async function createDashboardUser(
  server: TestServer,
  input: { email: string; role: UserRole; password?: string; organizationId?: string; name?: string },
): Promise<{ _id: string; email: string }> {
  const user = await createUser(server.deps, server.deps.store, { password: TEST_PASSWORD, ...input });
  return { _id: user._id, email: user.email };
}

/** The setup token the first start would print. */
export async function newSetupToken(server: TestServer): Promise<string> {
  const link = await createSetupLink(server.deps);
  if (!link) throw new Error('a user already exists: no setup link');
  return link.token;
}

/** The `name=value` pair of a Set-Cookie header, as a browser would send it back. */
export function cookieFrom(response: TestResponse, name = 'herald_session'): string | undefined {
  const header = response.headers.getSetCookie().find((line) => line.startsWith(`${name}=`));
  return header?.split(';')[0];
}

export async function signIn(server: TestServer, email: string, password = TEST_PASSWORD): Promise<DashboardSignIn> {
  const response = await server.request('POST', '/v1/dashboard/login', { key: null, body: { email, password } });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${response.text}`);
  const cookie = cookieFrom(response);
  if (!cookie) throw new Error('sign-in set no cookie');
  return {
    cookie,
    csrfToken: response.body.data.csrfToken,
    user: response.body.data.user,
    setCookie: response.headers.getSetCookie().find((line) => line.startsWith('herald_session='))!,
  };
}

export interface DashboardRequestOptions {
  body?: unknown;
  /** Novu-Environment-Id */
  environmentId?: string;
  /** false: send no X-CSRF-Token; a string: send that instead of the session's. */
  csrf?: false | string;
  headers?: Record<string, string>;
}

/** A request as the dashboard's script sends it: the cookie, the CSRF token on writes, no Authorization. */
export function asDashboard(server: TestServer, session: DashboardSignIn, method: string, path: string, options: DashboardRequestOptions = {}) {
  const headers: Record<string, string> = { cookie: session.cookie, ...(options.headers ?? {}) };
  if (options.environmentId) headers['novu-environment-id'] = options.environmentId;
  if (method !== 'GET' && options.csrf !== false) headers['x-csrf-token'] = options.csrf ?? session.csrfToken;
  return server.request(method, path, { key: null, body: options.body, headers });
}
