import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, RateLimitedError, ConflictError, UnavailableError, UnprocessableError, ValidationError } from '../domain/errors.js';
import type { ErrorBody } from './schemas/common.js';

/**
 * The one place where errors become HTTP answers, all in the body shape of API-CONVENTIONS.md.
 * Client mistakes are 4xx with a readable message; anything unexpected is a 500 carrying an errorId
 * that is also logged, never a stack trace or driver message.
 */
const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function errorBody(request: FastifyRequest, statusCode: number, message: string | string[]): ErrorBody {
  return {
    statusCode,
    timestamp: new Date().toISOString(),
    path: request.url,
    message,
    error: REASONS[statusCode] ?? 'Error',
  };
}

const DOMAIN_STATUS: Record<DomainError['code'], number> = {
  not_found: 404,
  validation: 400,
  conflict: 409,
  unprocessable: 422,
  unauthorized: 401,
  forbidden: 403,
  rate_limited: 429,
  unavailable: 503,
};

type AjvItem = NonNullable<FastifyError['validation']>[number];

function fieldOf(error: FastifyError, item: AjvItem): string {
  const path = (item.instancePath || '').replace(/^\//, '').replace(/\//g, '.');
  return path || error.validationContext || 'body';
}

/**
 * Turns ajv errors into "field must ..." strings, the form Novu clients display. The branch errors of
 * a union (anyOf) are folded into one message per field: `channel must be one of the following
 * values: email, sms` rather than one "must be equal to constant" per branch.
 */
export function validationMessages(error: FastifyError): string[] {
  const items = error.validation ?? [];
  if (items.length === 0) return [error.message];
  const unionPaths = new Set(items.filter((item) => item.keyword === 'anyOf').map((item) => item.instancePath));
  const messages = items.flatMap((item): string[] => {
    const params = item.params as Record<string, unknown>;
    const field = fieldOf(error, item);
    if (item.keyword === 'anyOf') {
      const branches = items.filter((other) => other.instancePath === item.instancePath && other.keyword !== 'anyOf');
      const constants = branches.filter((b) => b.keyword === 'const').map((b) => String((b.params as { allowedValue?: unknown }).allowedValue));
      const types = branches.filter((b) => b.keyword === 'type').map((b) => String((b.params as { type?: unknown }).type));
      if (constants.length > 0) return [`${field} must be one of the following values: ${constants.join(', ')}`];
      if (types.length > 0) return [`${field} must be ${types.join(' or ')}`];
      return [`${field} does not match any allowed shape`];
    }
    if (unionPaths.has(item.instancePath) && (item.keyword === 'const' || item.keyword === 'type')) return [];
    if (item.keyword === 'required') {
      const path = (item.instancePath || '').replace(/^\//, '').replace(/\//g, '.');
      return [`${[path, String(params.missingProperty)].filter(Boolean).join('.')} is required`];
    }
    if (item.keyword === 'enum' && Array.isArray(params.allowedValues)) {
      return [`${field} must be one of the following values: ${params.allowedValues.join(', ')}`];
    }
    return [`${field} ${item.message ?? 'is invalid'}`];
  });
  return [...new Set(messages)];
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P03', '08006', '08001', '08003']);
/** SQLite: locked past busy_timeout, disk trouble, file gone. */
const UNAVAILABLE_SQLITE_CODE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY)/;
/** Postgres/Redis connections lost; a Kysely or better-sqlite3 handle closed under the app. */
const UNAVAILABLE_MESSAGE =
  /Connection is closed|Connection terminated|connect ECONNREFUSED|driver has already been destroyed|database connection is not open|Cannot use a pool after calling end|not queryable|Client was closed/i;

/** PostgreSQL's SQLSTATE for a character the database encoding cannot hold, here only ever U+0000. */
const NUL_IN_TEXT = '22021';

/** Errors that look like a lost database or queue connection become 503, not 500. */
function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    error instanceof UnavailableError ||
    (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_SQLITE_CODE.test(code))) ||
    UNAVAILABLE_MESSAGE.test((error as Error)?.message ?? '')
  );
}

export function registerErrorHandler(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send(errorBody(request, 404, `Cannot ${request.method} ${request.url.split('?')[0]}`));
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof DomainError) {
      const status = DOMAIN_STATUS[error.code];
      const body = errorBody(request, status, error instanceof ValidationError ? error.messages : error.message);
      if (error instanceof UnprocessableError) body.errors = error.errors;
      if (error instanceof RateLimitedError) void reply.header('retry-after', String(error.retryAfterSeconds));
      if (error instanceof ConflictError && error.retryAfterSeconds) void reply.header('retry-after', String(error.retryAfterSeconds));
      if (error instanceof UnavailableError) void reply.header('retry-after', String(error.retryAfterSeconds));
      return reply.status(status).send(body);
    }
    if (error.validation) {
      return reply.status(400).send(errorBody(request, 400, validationMessages(error)));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.status(413).send(errorBody(request, 413, 'Request body is too large'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.status(415).send(errorBody(request, 415, 'Content-Type must be application/json'));
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.status(400).send(errorBody(request, 400, 'Content-Length does not match the body'));
    }
    if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return reply.status(400).send(errorBody(request, 400, ['body is not valid JSON']));
    }
    // PostgreSQL cannot store U+0000 in a text value (SQLSTATE 22021): the client sent it, so a 400, not a 500. The
    // statement failed, so nothing of it was stored. (SQLite stores such text; the embedded mode accepts it.)
    if ((error as { code?: unknown }).code === NUL_IN_TEXT) {
      return reply.status(400).send(errorBody(request, 400, ['a text value contains a NUL character (\\u0000), which cannot be stored']));
    }
    if (isUnavailable(error)) {
      request.log.warn({ err: error }, 'dependency unavailable');
      void reply.header('retry-after', '5');
      return reply.status(503).send(errorBody(request, 503, 'Service temporarily unavailable, retry later'));
    }
    const statusCode = error.statusCode ?? 500;
    if (statusCode >= 400 && statusCode < 500) {
      return reply.status(statusCode).send(errorBody(request, statusCode, error.message));
    }
    const errorId = randomUUID();
    request.log.error({ err: error, errorId }, 'unhandled error');
    const body = errorBody(request, 500, `Internal server error; report errorId ${errorId}`);
    body.errorId = errorId;
    return reply.status(500).send(body);
  });
}
