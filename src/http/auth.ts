import fp from 'fastify-plugin';
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError } from '../domain/errors.js';
import type { Caller, SubscriberCaller } from '../domain/types.js';
import type { Deps } from '../usecases/deps.js';
import { authenticateCaller, recallApiKeyCaller } from '../usecases/auth/authenticate-caller.js';
import { authenticateDashboardSession, type DashboardSession } from '../usecases/dashboard/authenticate-dashboard-session.js';
import { sameToken } from '../usecases/dashboard/opaque-tokens.js';
import { sessionCookieOf } from './session-cookie.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every authenticated route; public routes leave it undefined. */
    caller?: Caller;
    /** Set when the caller is a dashboard user signed in with the session cookie. */
    dashboardSession?: DashboardSession & { sessionToken: string };
  }
  interface FastifyContextConfig {
    /** Routes reachable without a key: /health and the API docs. */
    public?: boolean;
    /** Inbox routes: only a subscriber session token (from POST /v1/inbox/session) may call them. */
    subscriber?: boolean;
    /** Only a signed-in dashboard user (cookie): API keys and Bearer tokens get 403. */
    dashboardOnly?: boolean;
    /** Dashboard viewers get 403 even on a read (invites, audit log). */
    adminOnly?: boolean;
    /** A POST that changes nothing shared (sign-out, a preview): viewers may send it. */
    viewerAllowed?: boolean;
  }
}

/** Requests that change nothing; every other method needs the CSRF token and, from the dashboard, an admin. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The one place that tells callers apart (ARCHITECTURE.md, convention 12). An Authorization header wins: an API key,
 * a Bearer session token, or a subscriber session token (Inbox). Without one, the `herald_session` cookie makes a
 * dashboard caller, in the environment named by `Novu-Environment-Id` (an environment of the user's organization,
 * else 404; default development). Cookie-authenticated requests that change state must carry `X-CSRF-Token` (a
 * cookie is sent by the browser on its own; the token is only known to the dashboard's script), and only admins may
 * change state. Each kind reaches only its own routes: a subscriber token only the Inbox routes (`config.subscriber`),
 * and those only it (a dashboard cookie does not count there).
 * Runs on onRequest, before the body is read, so a bad key costs nothing.
 */
export const authPlugin = fp(async (app: FastifyInstance, opts: { deps: Deps }) => {
  app.decorateRequest('caller', undefined);
  app.decorateRequest('dashboardSession', undefined);
  // Synchronous for public routes and for an API key this process has cached (no promise on the hot path); the
  // others wait for their caller.
  app.addHook('onRequest', (request, _reply, done) => {
    const config = request.routeOptions.config ?? {};
    if (config.public || isDocsPath(request.url)) return done();
    const recalled = recallApiKeyCaller(opts.deps, request.headers.authorization);
    if (recalled) {
      try {
        admit(request, config, recalled);
      } catch (error) {
        return done(error as Error);
      }
      return done();
    }
    authenticate(opts.deps, request, config).then(() => done(), done);
  });
});

async function authenticate(deps: Deps, request: FastifyRequest, config: FastifyContextConfig): Promise<void> {
  const inboxRoute = config.subscriber === true;
  // The cookie is parsed only where it could sign the caller in: no Authorization header, not an Inbox route.
  const sessionToken = !request.headers.authorization && !inboxRoute ? sessionCookieOf(request) : undefined;
  if (sessionToken) {
    const session = await authenticateDashboardSession(deps, {
      sessionToken,
      environmentId: singleHeader(request, 'novu-environment-id'),
    });
    if (!SAFE_METHODS.has(request.method)) {
      const sent = singleHeader(request, 'x-csrf-token');
      if (!sent || !sameToken(sent, session.csrfToken)) throw new ForbiddenError('CSRF token missing or invalid');
      if (session.user.role !== 'admin' && !config.viewerAllowed) throw new ForbiddenError('Viewers cannot make changes');
    }
    if (config.adminOnly && session.user.role !== 'admin') throw new ForbiddenError('Only admins can do this');
    request.caller = session.caller;
    request.dashboardSession = { ...session, sessionToken };
    return;
  }
  admit(request, config, await authenticateCaller(deps, request.headers.authorization));
}

/** Whether a caller from the Authorization header may call this route; sets it on the request if so. */
function admit(request: FastifyRequest, config: FastifyContextConfig, caller: Caller): void {
  const inboxRoute = config.subscriber === true;
  if (inboxRoute && caller.kind !== 'subscriber') {
    throw new UnauthorizedError('Inbox routes take a subscriber session token from POST /v1/inbox/session (widget routes: POST /v1/widgets/session/initialize)');
  }
  if (!inboxRoute && caller.kind === 'subscriber') throw new UnauthorizedError('A subscriber session token can only call /v1/inbox routes');
  if (config.dashboardOnly) throw new ForbiddenError('This route needs a dashboard sign-in');
  request.caller = caller;
}

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The API reference pages (@fastify/swagger-ui registers them without our route config). In any letter case, as the
 * router matches them (app.ts `caseSensitive: false`).
 */
function isDocsPath(url: string): boolean {
  return /^\/docs(?:[/?]|$)/i.test(url);
}

/** The caller of an authenticated route; routes use this instead of the optional field. */
export function callerOf(request: { caller?: Caller }): Caller {
  if (!request.caller) throw new Error('route is missing authentication');
  return request.caller;
}

/** The subscriber of an Inbox route (`config.subscriber`); the auth hook guarantees the kind. */
export function subscriberCallerOf(request: { caller?: Caller }): SubscriberCaller {
  const caller = callerOf(request);
  if (caller.kind !== 'subscriber') throw new Error('route is not an Inbox route');
  return caller;
}

/** The dashboard session of a `dashboardOnly` route. */
export function dashboardSessionOf(request: FastifyRequest): DashboardSession & { sessionToken: string } {
  if (!request.dashboardSession) throw new Error('route is missing dashboardOnly');
  return request.dashboardSession;
}
