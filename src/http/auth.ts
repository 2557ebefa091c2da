import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Caller } from '../domain/types.js';
import type { Deps } from '../usecases/deps.js';
import { authenticateCaller } from '../usecases/auth/authenticate-caller.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every authenticated route; public routes leave it undefined. */
    caller?: Caller;
  }
  interface FastifyContextConfig {
    /** Routes reachable without a key: /health and the API docs. */
    public?: boolean;
  }
}

/** Authentication runs on onRequest, before the body is read, so a bad key costs nothing. */
export const authPlugin = fp(async (app: FastifyInstance, opts: { deps: Deps }) => {
  app.decorateRequest('caller', undefined);
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.public || isDocsPath(request.url)) return;
    request.caller = await authenticateCaller(opts.deps, request.headers.authorization);
  });
});

/** The API reference pages (@fastify/swagger-ui registers them without our route config). */
function isDocsPath(url: string): boolean {
  return url === '/docs' || url.startsWith('/docs/') || url.startsWith('/docs?');
}

/** The caller of an authenticated route; routes use this instead of the optional field. */
export function callerOf(request: { caller?: Caller }): Caller {
  if (!request.caller) throw new Error('route is missing authentication');
  return request.caller;
}
