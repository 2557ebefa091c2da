import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../domain/errors.js';
import type { Deps } from '../usecases/deps.js';
import type { RequestSpan } from './ports.js';

/** The route label of a request no route matched (a 404): one series, whatever the URL. */
export const UNMATCHED_ROUTE = 'unmatched';

const spans = new WeakMap<FastifyRequest, RequestSpan>();

/**
 * `GET /metrics`, and the server span of each request when tracing is on. Registered first, so the span is active in
 * every later hook. `herald_http_request_duration_seconds` is recorded by app.ts's one onResponse hook (see
 * httpRequestRecorder). /metrics is public to the auth layer (it has its own token), hence neither rate limited nor
 * audited.
 */
export const observabilityPlugin = fp(async (app: FastifyInstance, opts: { deps: Deps }) => {
  const { metrics, tracing, config } = opts.deps;
  if (config.metrics.enabled) {
    const allowed = config.metrics.token === undefined ? undefined : bearerCheck(config.metrics.token);
    app.get('/metrics', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      if (allowed && !allowed(request.headers.authorization)) {
        void reply.header('www-authenticate', 'Bearer');
        throw new UnauthorizedError('/metrics needs Authorization: Bearer <HERALD_METRICS_TOKEN>');
      }
      const scraped = await metrics.scrape();
      return reply.header('content-type', scraped!.contentType).send(scraped!.body);
    });
  }
  if (tracing.enabled) {
    app.addHook('onRequest', (request, _reply, done) => {
      const traceparent = request.headers.traceparent;
      const span = tracing.startRequestSpan(
        request.method,
        request.routeOptions.url ?? UNMATCHED_ROUTE,
        request.url.split('?')[0]!,
        typeof traceparent === 'string' ? traceparent : undefined,
      );
      if (span) spans.set(request, span);
      span ? span.enter(done) : done();
    });
    // A request body is read in the socket's callbacks, outside the context entered above: the span is entered again
    // just before the handler, so whatever the handler starts (a trigger's enqueue) runs inside it.
    app.addHook('preHandler', (request, _reply, done) => {
      const span = spans.get(request);
      span ? span.enter(done) : done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      spans.get(request)?.end(request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode);
      done();
    });
  }
});

/**
 * What app.ts's onResponse hook calls for `herald_http_request_duration_seconds`, or undefined when metrics are off.
 * It shares that hook (the request log line) rather than adding one: every app-wide hook is one more step in every
 * request's onResponse chain.
 */
export function httpRequestRecorder(deps: Pick<Deps, 'config' | 'metrics'>): ((request: FastifyRequest, statusCode: number, ms: number) => void) | undefined {
  if (!deps.config.metrics.enabled) return undefined;
  const { metrics } = deps;
  return (request, statusCode, ms) => metrics.httpRequest(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, statusCode, ms / 1000);
}

/** A constant-time comparison of the Authorization header with `Bearer <token>` (hashes first: equal lengths). */
export function bearerCheck(token: string): (header: string | undefined) => boolean {
  const expected = createHash('sha256').update(`Bearer ${token}`).digest();
  return (header) => header !== undefined && timingSafeEqual(createHash('sha256').update(header).digest(), expected);
}
