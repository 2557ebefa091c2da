import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../usecases/deps.js';
import { errorBody, registerErrorHandler } from './error-handler.js';
import { ErrorBody } from './schemas/common.js';
import { strictBodyValidatorCompiler } from './schemas/strict-body.js';
import { authPlugin } from './auth.js';
import { idempotencyPlugin } from './idempotency.js';
import { rateLimitPlugin } from './rate-limit.js';
import { healthRoutes } from './routes/health.js';
import { integrationsRoutes } from './routes/integrations.js';
import { subscribersRoutes } from './routes/subscribers.js';
import { subscriberCredentialsRoutes } from './routes/subscriber-credentials.js';
import { messagesRoutes } from './routes/messages.js';
import { notificationsRoutes } from './routes/notifications.js';
import { workflowsRoutes } from './routes/workflows.js';
import { topicsRoutes } from './routes/topics.js';
import { eventsRoutes } from './routes/events.js';
import { inboxRoutes } from './routes/inbox.js';

export interface BuildAppOptions {
  /** A pino logger instance (or pino options); `false` silences request logs (tests). */
  logger?: boolean | object;
  /** Extra route plugins registered after the core ones (the workflow engine's routes). */
  extraRoutes?: Array<(app: FastifyInstance, deps: Deps) => Promise<void>>;
}

/**
 * The HTTP application: every route's TypeBox schema gives validation, serialization and the
 * OpenAPI 3.1 document. Order matters: auth (onRequest) → rate limit → idempotency → handler.
 */
export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...loggerOptions(options.logger),
    logController: new LogController({ disableRequestLogging: true }),
    // A URL fastify cannot decode (`/%zz`) never reaches the error handler: answer it in the same shape.
    frameworkErrors: (_error, request, reply: FastifyReply) => void reply.status(400).send(errorBody(request, 400, ['url is not a valid URL'])),
    bodyLimit: deps.config.bodyLimitBytes,
    trustProxy: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Bodies are validated without type coercion; query, params and headers with it (see strict-body.ts).
  app.setValidatorCompiler(strictBodyValidatorCompiler);

  // JSON only: a text/plain body is a 415, not a string handed to the handler.
  app.removeContentTypeParser('text/plain');
  app.addSchema(ErrorBody);
  registerErrorHandler(app);

  // One log line per request, never a header or body (they may carry keys and credentials).
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, url: request.url.split('?')[0], statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Herald API', version: '0.1.0', description: 'Self-hosted notification service; a Novu-compatible REST API subset.' },
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`ApiKey <secret key>`' },
          Session: { type: 'http', scheme: 'bearer', description: 'Session token from `herald token create`' },
        },
      },
      security: [{ ApiKey: [] }, { Session: [] }],
    },
    // Public routes (/health) need no key: an empty security list says so in the document.
    transform: ({ schema, url, route }) => ({
      schema: route.config?.public ? ({ ...schema, security: [] } as typeof schema) : schema,
      url,
    }),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());

  await app.register(authPlugin, { deps });
  await app.register(rateLimitPlugin, { deps });
  await app.register(idempotencyPlugin, { deps });

  await app.register(healthRoutes, { deps });
  await app.register(integrationsRoutes, { deps });
  await app.register(subscribersRoutes, { deps });
  await app.register(subscriberCredentialsRoutes, { deps });
  await app.register(messagesRoutes, { deps });
  await app.register(notificationsRoutes, { deps });
  await app.register(workflowsRoutes, { deps });
  await app.register(topicsRoutes, { deps });
  await app.register(eventsRoutes, { deps });
  await app.register(inboxRoutes, { deps });
  for (const register of options.extraRoutes ?? []) await register(app, deps);

  await app.ready();
  return app;
}

/** Fastify 5 takes a ready logger as `loggerInstance` and options as `logger`; callers pass either. */
function loggerOptions(logger: BuildAppOptions['logger']): { logger: boolean | object } | { loggerInstance: FastifyBaseLogger } {
  const isInstance = typeof logger === 'object' && logger !== null && typeof (logger as { child?: unknown }).child === 'function';
  return isInstance ? { loggerInstance: logger as FastifyBaseLogger } : { logger: logger ?? false };
}
