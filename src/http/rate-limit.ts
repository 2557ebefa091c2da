import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Deps } from '../usecases/deps.js';
import { checkRateLimit, RateLimitExceeded, type RateLimitCategory, type RateLimitState } from '../usecases/requests/check-rate-limit.js';

const CONFIGURATION_PATH = /^\/v\d+\/(integrations|workflows|topics)(\/|$)/;
const MUTATING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** trigger: everything under /v1/events; configuration: writes to integrations, workflows, topics; global: the rest. */
export function rateLimitCategory(method: string, path: string): RateLimitCategory {
  if (path === '/v1/events' || path.startsWith('/v1/events/')) return 'trigger';
  if (MUTATING_METHODS.has(method) && CONFIGURATION_PATH.test(path)) return 'configuration';
  return 'global';
}

function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  void reply.headers({
    'ratelimit-limit': String(state.limit),
    'ratelimit-remaining': String(state.remaining),
    'ratelimit-reset': String(state.resetSeconds),
    'ratelimit-policy': state.policy,
  });
}

/**
 * Per-environment limits (API-CONVENTIONS.md, Rate limits). Runs on onRequest right after auth, so an
 * unauthenticated request costs nothing and a limited one never has its body read.
 */
export const rateLimitPlugin = fp(async (app: FastifyInstance, opts: { deps: Deps }) => {
  if (!opts.deps.config.rateLimit.enabled) return;
  app.addHook('onRequest', async (request, reply) => {
    if (!request.caller) return;
    const path = request.routeOptions.url ?? request.url.split('?')[0];
    const category = rateLimitCategory(request.method, path);
    try {
      const state = await checkRateLimit(opts.deps, { environmentId: request.caller.environmentId, category });
      if (state) setRateLimitHeaders(reply, state);
    } catch (error) {
      if (error instanceof RateLimitExceeded) setRateLimitHeaders(reply, error.state);
      throw error;
    }
  });
});
