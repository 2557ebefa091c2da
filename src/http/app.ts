import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../usecases/deps.js';
import { errorBody, registerErrorHandler } from './error-handler.js';
import { ErrorBody } from './schemas/common.js';
import { strictBodyValidatorCompiler } from './schemas/strict-body.js';
import { sharedSerializerBuilder } from './shared-serializers.js';
import { routeBodyLimit } from './body-limits.js';
import { withoutApiTrailingSlash } from './trailing-slash.js';
import { parseEmptyJsonBodyAs } from './empty-json-body.js';
import { parseQueryString } from './query-string.js';
import { authPlugin } from './auth.js';
import { inboxCorsPlugin, isInboxOriginAllowed } from './inbox-cors.js';
import { auditPlugin } from './audit.js';
import { idempotencyPlugin } from './idempotency.js';
import { readGathering } from './read-gathering.js';
import { rateLimitPlugin } from './rate-limit.js';
import { lazyRequestLogger } from './request-logger.js';
import { pathOf, requestLineWriter } from './request-line.js';
import { healthRoutes } from './routes/health.js';
import { lifecycleGate, type Lifecycle } from './lifecycle.js';
import { integrationsRoutes } from './routes/integrations.js';
import { subscribersRoutes } from './routes/subscribers.js';
import { subscribersV1Routes } from './routes/subscribers-v1.js';
import { topicsV1Routes } from './routes/topics-v1.js';
import { subscriberCredentialsRoutes } from './routes/subscriber-credentials.js';
import { messagesRoutes } from './routes/messages.js';
import { notificationsRoutes } from './routes/notifications.js';
import { workflowsRoutes } from './routes/workflows.js';
import { topicsRoutes } from './routes/topics.js';
import { eventsRoutes } from './routes/events.js';
import { bridgeRoutes } from './routes/bridge.js';
import { inboxRoutes } from './routes/inbox.js';
import { subscriberNotificationsRoutes } from './routes/subscriber-notifications.js';
import { dashboardPlugin } from './dashboard.js';
import { dashboardAuthRoutes } from './routes/dashboard-auth.js';
import { dashboardAdminRoutes } from './routes/dashboard-admin.js';
import { dashboardActivityRoutes } from './routes/dashboard-activity.js';
import { dashboardSettingsRoutes } from './routes/dashboard-settings.js';
import { dashboardOverviewRoutes } from './routes/dashboard-overview.js';
import { preferencesRoutes } from './routes/preferences.js';
import { environmentsRoutes } from './routes/environments.js';
import { webhooksRoutes } from './routes/webhooks.js';
import { inboxClientRoutes } from './routes/inbox-client.js';
import { widgetRoutes } from './routes/widgets.js';
import { providerReportsRoutes } from './routes/provider-reports.js';
import type { RealtimeFanout } from '../realtime/fanout.js';
import { attachInboxSockets } from '../realtime/socket-server.js';
import { InboxReadCache } from './inbox-read-cache.js';
import type { PageReaders } from '../readers/reader-pool.js';
import { httpRequestRecorder, observabilityPlugin } from '../observability/http-plugin.js';

export interface BuildAppOptions {
  /** A pino logger instance (or pino options); `false` silences request logs (tests). */
  logger?: boolean | object;
  /** Extra route plugins registered after the core ones (the workflow engine's routes). */
  extraRoutes?: Array<(app: FastifyInstance, deps: Deps) => Promise<void>>;
  /**
   * Serve the Inbox's socket.io endpoint (`/socket.io/`) on this app's own HTTP server, fed by this fan-out
   * (the container's `realtime`). API processes pass it; without it there is no socket endpoint.
   */
  realtime?: RealtimeFanout;
  /** The process's start/drain state behind `GET /health/ready` (http/lifecycle.ts); absent: always started. */
  lifecycle?: Lifecycle;
  /** Embedded: the reader threads that read the list pages (the container's `readers`); absent: the event loop reads them. */
  readers?: PageReaders;
}

/**
 * The HTTP application: every route's TypeBox schema gives validation, serialization and the
 * OpenAPI 3.1 document. Order matters: auth (onRequest) → rate limit → idempotency → handler.
 */
export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...loggerOptions(options.logger),
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is made at its first line (request-logger.ts): the request line is written without it, and most
    // requests log nothing else.
    childLoggerFactory: lazyRequestLogger,
    // A URL fastify cannot decode (`/%zz`) never reaches the error handler: answer it in the same shape.
    frameworkErrors: (_error, request, reply: FastifyReply) => void reply.status(400).send(errorBody(request, 400, ['url is not a valid URL'])),
    bodyLimit: deps.config.bodyLimitBytes,
    trustProxy: false,
    // With a lifecycle, requests arriving while draining get the API's 503 (lifecycleGate) instead of Fastify's.
    return503OnClosing: options.lifecycle === undefined,
    // Repeated, bracketed (`a[]=`) and single query values all reach the schemas as one name (query-string.ts).
    // Paths match whatever their letters' case (`/V1/Messages`), as Novu's Express router matches them; parameters
    // keep theirs (`/v1/subscribers/AbC` is subscriber `AbC`).
    routerOptions: { querystringParser: parseQueryString, caseSensitive: false },
    // `/v1/messages/` is `/v1/messages`, as Novu answers it (trailing-slash.ts).
    rewriteUrl: (request) => withoutApiTrailingSlash(request.url ?? '/'),
    schemaController: { compilersFactory: { buildSerializer: sharedSerializerBuilder() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Bodies are validated without type coercion; query, params and headers with it (see strict-body.ts).
  app.setValidatorCompiler(strictBodyValidatorCompiler);

  // JSON only: a text/plain body is a 415, not a string handed to the handler.
  app.removeContentTypeParser('text/plain');
  // Clients send `Content-Type: application/json` on bodiless calls too (a DELETE through a client with default
  // headers). Novu's body parser reads such an empty body as `{}`, so here too: a route with a body schema then
  // answers its validation 400 (a required property missing), a route without one ignores it. The Inbox and widget
  // plugins keep their own rule (an empty body is no body).
  parseEmptyJsonBodyAs(app, {});
  if (options.lifecycle) app.addHook('onRequest', lifecycleGate(options.lifecycle));
  // Before any route: the trigger, workflow and bridge-sync routes read larger bodies, as Novu's do (body-limits.ts).
  // A route's own log level applies to its request's child logger: the request line of such a route goes through it.
  let routeLogLevels = false;
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= routeBodyLimit(route.url, deps.config);
    if (route.logLevel) routeLogLevels = true;
  });
  app.addSchema(ErrorBody);
  registerErrorHandler(app);
  // First: its request span must be active in every later hook; /metrics and the request-duration histogram.
  await app.register(observabilityPlugin, { deps });

  // One log line per request, never a header or body (they may carry keys and credentials), and with metrics on the
  // request's herald_http_request_duration_seconds observation: one hook for both (each app-wide hook is a step of
  // every request). Synchronous, as are the other app-wide hooks whenever they have nothing to wait for: an async hook
  // costs a promise on every request.
  const recordRequest = httpRequestRecorder(deps);
  // The line's bytes put together directly when the logger allows it (request-line.ts), else written through pino.
  const writeRequestLine = requestLineWriter(app.log);
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    recordRequest?.(request, reply.statusCode, ms);
    const path = pathOf(request.url);
    if (writeRequestLine && !routeLogLevels) writeRequestLine(request.id, request.method, path, reply.statusCode, Math.round(ms));
    else request.log.info({ method: request.method, url: path, statusCode: reply.statusCode, ms: Math.round(ms) }, 'request');
    done();
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Herald API', version: '0.1.0', description: 'Self-hosted notification service; a Novu-compatible REST API subset.' },
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`ApiKey <secret key>`' },
          Session: { type: 'http', scheme: 'bearer', description: 'Session token from `herald token create`' },
          SubscriberSession: { type: 'http', scheme: 'bearer', description: 'Subscriber token from `POST /v1/inbox/session` or `POST /v1/widgets/session/initialize` (the /v1/inbox and /v1/widgets routes only)' },
          DashboardSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'herald_session',
            description: 'Dashboard sign-in (POST /v1/dashboard/login); non-GET requests also send X-CSRF-Token',
          },
        },
      },
      security: [{ ApiKey: [] }, { Session: [] }, { DashboardSession: [] }],
    },
    // Public routes (/health) need no key: an empty security list says so in the document.
    // Public routes need no credentials; dashboard-only routes take the sign-in cookie alone.
    transform: ({ schema, url, route }) => ({
      schema: route.config?.public
        ? ({ ...schema, security: [] } as typeof schema)
        : route.config?.dashboardOnly
          ? ({ ...schema, security: [{ DashboardSession: [] }] } as typeof schema)
          : schema,
      url,
    }),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

  // Before auth: a preflight carries no Authorization header and is answered in this plugin's hook.
  await app.register(inboxCorsPlugin, { config: deps.config });
  // No hooks: session-cookie.ts parses the Cookie header where a sign-in cookie counts and writes Set-Cookie itself.
  await app.register(cookie, { hook: false });
  await app.register(authPlugin, { deps });
  await app.register(auditPlugin, { deps });
  await app.register(rateLimitPlugin, { deps });
  await app.register(idempotencyPlugin, { deps });
  // Without Redis (embedded): scaled out, reads wait for PostgreSQL and Redis round trips, which gather them already.
  if (!deps.config.redisUrl) app.addHook('onRequest', readGathering());

  await app.register(healthRoutes, { deps, lifecycle: options.lifecycle });
  await app.register(dashboardPlugin, {});
  await app.register(integrationsRoutes, { deps });
  await app.register(subscribersRoutes, { deps });
  await app.register(subscribersV1Routes, { deps });
  await app.register(subscriberCredentialsRoutes, { deps });
  await app.register(messagesRoutes, { deps, readers: options.readers });
  await app.register(notificationsRoutes, { deps, readers: options.readers });
  await app.register(workflowsRoutes, { deps });
  await app.register(topicsRoutes, { deps });
  await app.register(topicsV1Routes, { deps });
  await app.register(eventsRoutes, { deps });
  await app.register(bridgeRoutes, { deps });
  await app.register(inboxRoutes, { deps });
  await app.register(subscriberNotificationsRoutes, { deps });
  await app.register(dashboardAuthRoutes, { deps });
  await app.register(dashboardAdminRoutes, { deps });
  await app.register(dashboardActivityRoutes, { deps });
  await app.register(dashboardSettingsRoutes, { deps });
  await app.register(dashboardOverviewRoutes, { deps });
  await app.register(preferencesRoutes, { deps });
  await app.register(environmentsRoutes, { deps });
  const readCache = inboxReadCacheOf(app, deps, options.realtime);
  await app.register(inboxClientRoutes, { deps, readCache });
  await app.register(widgetRoutes, { deps, readCache });
  await app.register(providerReportsRoutes, { deps });
  await app.register(webhooksRoutes, { deps });
  for (const register of options.extraRoutes ?? []) await register(app, deps);

  if (options.realtime) {
    const sockets = await attachInboxSockets(app.server, { deps, fanout: options.realtime, originAllowed: (origin) => isInboxOriginAllowed(deps.config.inbox.allowedOrigins, origin) });
    const untrackSockets = deps.metrics.trackRealtimeConnections(sockets.connectionCount);
    // Open sockets would keep the HTTP server from closing: they go first.
    app.addHook('preClose', async () => {
      untrackSockets();
      await sockets.close();
    });
  }

  await app.ready();
  return app;
}

/**
 * The Inbox's read answers are kept only where every Inbox write announces itself in this process (the embedded
 * fan-out): each announcement makes the subscriber's kept answers stale. Scale-out API processes read every time
 * (another process's write would reach them only later, through Redis).
 */
function inboxReadCacheOf(app: FastifyInstance, deps: Deps, realtime: RealtimeFanout | undefined): InboxReadCache | undefined {
  if (realtime?.kind !== 'local' || deps.config.inbox.readCacheBytes === 0) return undefined;
  const cache = new InboxReadCache({ maxBytes: deps.config.inbox.readCacheBytes, ttlMs: INBOX_READ_CACHE_TTL_MS });
  const stop = realtime.hub.subscribe((event) => cache.invalidate(event.audience));
  app.addHook('onClose', async () => stop());
  return cache;
}

/** A safety net only: answers are made stale by the writes' announcements, not by age. */
const INBOX_READ_CACHE_TTL_MS = 60_000;

/** Fastify 5 takes a ready logger as `loggerInstance` and options as `logger`; callers pass either. */
function loggerOptions(logger: BuildAppOptions['logger']): { logger: boolean | object } | { loggerInstance: FastifyBaseLogger } {
  const isInstance = typeof logger === 'object' && logger !== null && typeof (logger as { child?: unknown }).child === 'function';
  return isInstance ? { loggerInstance: logger as FastifyBaseLogger } : { logger: logger ?? false };
}
