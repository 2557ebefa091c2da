import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, preHandlerAsyncHookHandler } from 'fastify';
import type { Deps } from '../usecases/deps.js';
import { pathOf } from './request-line.js';
import { checkRateLimit, checkRateLimitNow, RateLimitExceeded, type RateLimitCategory, type RateLimitState } from '../usecases/requests/check-rate-limit.js';

const CONFIGURATION_PATH = /^\/v\d+\/(integrations|workflows|topics)(\/|$)/;
const MUTATING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** trigger: everything under /v1/events; configuration: writes to integrations, workflows, topics; global: the rest. */
export function rateLimitCategory(method: string, path: string): RateLimitCategory {
  if (path === '/v1/events' || path.startsWith('/v1/events/')) return 'trigger';
  if (MUTATING_METHODS.has(method) && CONFIGURATION_PATH.test(path)) return 'configuration';
  return 'global';
}

function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  // One call per header: reply.headers() would take an object made for it and walk its keys, on every request.
  void reply.header('ratelimit-limit', String(state.limit));
  void reply.header('ratelimit-remaining', String(state.remaining));
  void reply.header('ratelimit-reset', String(state.resetSeconds));
  void reply.header('ratelimit-policy', state.policy);
}

/**
 * Per-environment limits (API-CONVENTIONS.md, Rate limits). Runs on onRequest right after auth, so an
 * unauthenticated request costs nothing and a limited one never has its body read.
 */
export const rateLimitPlugin = fp(async (app: FastifyInstance, opts: { deps: Deps }) => {
  if (!opts.deps.config.rateLimit.enabled) return;
  const limit = async (reply: FastifyReply, environmentId: string, category: RateLimitCategory) => {
    try {
      const state = await checkRateLimit(opts.deps, { environmentId, category });
      if (state) setRateLimitHeaders(reply, state);
    } catch (error) {
      if (error instanceof RateLimitExceeded) setRateLimitHeaders(reply, error.state);
      throw error;
    }
  };
  // Counted in this process's memory (embedded): answered without a promise.
  const limitNow = opts.deps.rateLimits.hitNow
    ? (reply: FastifyReply, environmentId: string, category: RateLimitCategory) => {
        try {
          const state = checkRateLimitNow(opts.deps, { environmentId, category });
          if (state) setRateLimitHeaders(reply, state);
        } catch (error) {
          if (error instanceof RateLimitExceeded) setRateLimitHeaders(reply, error.state);
          throw error;
        }
      }
    : undefined;
  // Synchronous for public routes (no caller: nothing to count) and where the count is in memory; otherwise a
  // counted request waits for its limit.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.caller) return done();
    // Inbox callers are counted per subscriber, so one busy browser cannot use up its environment's limit.
    const caller = request.caller;
    const counter = caller.kind === 'subscriber' ? `subscriber:${caller.subscriberRecordId}` : caller.environmentId;
    const category = caller.kind === 'subscriber' ? 'inbox' : rateLimitCategory(request.method, request.routeOptions.url ?? pathOf(request.url));
    if (!limitNow) return void limit(reply, counter, category).then(() => done(), done);
    try {
      limitNow(reply, counter, category);
    } catch (error) {
      return done(error as Error);
    }
    done();
  });
  // The Inbox session route is public: it is counted per application identifier, read from the validated body. Its
  // hook is attached to that route alone.
  const limitInboxSession: preHandlerAsyncHookHandler = async (request, reply) => {
    const identifier = (request.body as { applicationIdentifier?: unknown } | undefined)?.applicationIdentifier;
    return limit(reply, `application:${typeof identifier === 'string' ? identifier : ''}`, 'inbox-session');
  };
  app.addHook('onRoute', (route) => {
    if (route.config?.inboxSession) route.preHandler = [...[route.preHandler ?? []].flat(), limitInboxSession];
  });
});

declare module 'fastify' {
  interface FastifyContextConfig {
    /** POST /v1/inbox/session: rate-limited per application identifier. */
    inboxSession?: boolean;
  }
}
