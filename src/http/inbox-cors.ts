import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

/**
 * CORS for the browser-facing parts only: the Inbox routes (`/v1/inbox/*`), the older widget's (`/v1/widgets/*`) and
 * the realtime socket (`/socket.io/`).
 * Every other route answers without CORS headers, so a browser page cannot call the secret-key API. The Inbox uses
 * bearer tokens and no cookies, so any origin is allowed unless HERALD_INBOX_ALLOWED_ORIGINS lists some.
 */

/** The headers @novu/js sends (spec/inbox-client-protocol.md §1), and the methods it uses. */
export const INBOX_CORS_HEADERS = ['authorization', 'content-type', 'novu-api-version', 'novu-client-version', 'novu-application-identifier'];
export const INBOX_CORS_METHODS = ['GET', 'POST', 'PATCH', 'DELETE'];

/** True when `path` is served with CORS: the Inbox and widget routes and the socket.io endpoint. */
export function isBrowserFacingPath(path: string): boolean {
  return path.startsWith('/v1/inbox/') || path.startsWith('/v1/widgets/') || path === '/socket.io' || path.startsWith('/socket.io/');
}

/**
 * Whether a browser page of `origin` may call the Inbox and open its socket (the socket server uses it too). `*`
 * allows any origin; a request without an Origin header is no browser's (CORS protects browsers only) and is allowed.
 */
export function isInboxOriginAllowed(allowedOrigins: string[], origin: string | undefined): boolean {
  if (origin === undefined || allowedOrigins.includes('*')) return true;
  return allowedOrigins.includes(origin.replace(/\/+$/, ''));
}

/** The socket.io server's `cors` option, from the same configuration. */
export function socketCorsOptions(config: Pick<Config, 'inbox'>) {
  const allowed = config.inbox.allowedOrigins;
  return {
    origin: allowed.includes('*') ? '*' : (origin: string | undefined, callback: (error: Error | null, allow?: boolean) => void) => callback(null, isInboxOriginAllowed(allowed, origin)),
    methods: ['GET', 'POST'],
    credentials: false,
  };
}

/** Preflight answers, computed once: the methods and headers the Inbox client may use, cached by browsers for 10 minutes. */
const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': INBOX_CORS_METHODS.join(', '),
  'access-control-allow-headers': INBOX_CORS_HEADERS.join(', '),
  'access-control-max-age': '600',
};

/**
 * One synchronous onRequest hook, first of all, so a preflight (which carries no Authorization header) is answered
 * before authentication. It answers as @fastify/cors did with a per-path options delegator (credentials off, strict
 * preflight, `Vary: Origin` on every answer since the options depend on the request), without building and
 * normalizing two option objects per request, which that plugin does whenever a delegator is given.
 * - Not a browser-facing path, or an Origin not allowed: no CORS headers (the request goes on; a preflight then meets
 *   authentication and the not-found answer of the OPTIONS route below).
 * - Allowed: `Access-Control-Allow-Origin` (`*`, or the request's Origin when a list is configured); a preflight is
 *   answered here: 204 with the methods, headers and max age, or 400 `Invalid Preflight Request` without an Origin or
 *   `Access-Control-Request-Method`.
 */
export const inboxCorsPlugin = fp(async (app: FastifyInstance, opts: { config: Pick<Config, 'inbox'> }) => {
  const allowed = opts.config.inbox.allowedOrigins;
  const anyOrigin = allowed.includes('*');
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('vary', 'Origin');
    const query = request.url.indexOf('?');
    if (!isBrowserFacingPath(query === -1 ? request.url : request.url.slice(0, query))) return done();
    const origin = request.headers.origin;
    if (anyOrigin) void reply.header('access-control-allow-origin', '*');
    else if (!isInboxOriginAllowed(allowed, origin)) return done();
    else if (origin) void reply.header('access-control-allow-origin', origin);
    if (request.method !== 'OPTIONS') return done();
    if (!origin || !request.headers['access-control-request-method']) {
      void reply.code(400).type('text/plain').send('Invalid Preflight Request');
      return;
    }
    void reply.headers(PREFLIGHT_HEADERS).code(204).header('content-length', '0').send();
  });
  // Lets OPTIONS requests reach the hook above on every path; one the hook did not answer is not found.
  app.options('*', { schema: { hide: true } }, (_request, reply) => {
    reply.callNotFound();
  });
});
