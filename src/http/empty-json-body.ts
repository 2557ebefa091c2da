import type { FastifyInstance } from 'fastify';

/**
 * Fastify's own JSON parser, except that an empty body becomes `emptyBody` instead of a 400: clients send
 * `Content-Type: application/json` on bodiless calls too. The API reads it as `{}` (as Novu's body parser does); the
 * Inbox and widget plugins as no body (`undefined`), in their own scope.
 */
export function parseEmptyJsonBodyAs(app: Pick<FastifyInstance, 'getDefaultJsonParser' | 'removeContentTypeParser' | 'addContentTypeParser'>, emptyBody: unknown): void {
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') return done(null, emptyBody);
    return defaultJsonParser(request, text, done);
  });
}
