import cors, { type FastifyCorsOptions } from '@fastify/cors';
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

/**
 * CORS for the browser-facing parts only: the Inbox routes (`/v1/inbox/*`) and the realtime socket (`/socket.io/`).
 * Every other route answers without CORS headers, so a browser page cannot call the secret-key API. The Inbox uses
 * bearer tokens and no cookies, so any origin is allowed unless HERALD_INBOX_ALLOWED_ORIGINS lists some.
 */

/** The headers @novu/js sends (spec/inbox-client-protocol.md §1), and the methods it uses. */
export const INBOX_CORS_HEADERS = ['authorization', 'content-type', 'novu-api-version', 'novu-client-version', 'novu-application-identifier'];
export const INBOX_CORS_METHODS = ['GET', 'POST', 'PATCH', 'DELETE'];

/** True when `path` is served with CORS: the Inbox routes and the socket.io endpoint. */
export function isBrowserFacingPath(path: string): boolean {
  return path.startsWith('/v1/inbox/') || path === '/socket.io' || path.startsWith('/socket.io/');
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

export const inboxCorsPlugin = fp(async (app: FastifyInstance, opts: { config: Pick<Config, 'inbox'> }) => {
  const allowed = opts.config.inbox.allowedOrigins;
  const inboxOptions: FastifyCorsOptions = {
    origin: allowed.includes('*') ? '*' : (origin, callback) => callback(null, isInboxOriginAllowed(allowed, origin)),
    methods: INBOX_CORS_METHODS,
    allowedHeaders: INBOX_CORS_HEADERS,
    credentials: false,
    maxAge: 600,
    strictPreflight: true,
  };
  await app.register(cors, {
    hideOptionsRoute: true,
    delegator: (request, callback) => callback(null, isBrowserFacingPath(request.url.split('?')[0]) ? inboxOptions : { origin: false }),
  });
});
