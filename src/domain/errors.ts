/**
 * Domain errors with stable codes. Use-cases throw these; `http/error-handler.ts` is the only place
 * that turns them into HTTP statuses and the error body of API-CONVENTIONS.md.
 */
export type DomainErrorCode =
  | 'not_found'
  | 'validation'
  | 'conflict'
  | 'unprocessable'
  | 'unauthorized'
  | 'forbidden'
  | 'rate_limited'
  | 'unavailable';

export abstract class DomainError extends Error {
  abstract readonly code: DomainErrorCode;
}

/** 404. `message` is the full text the client sees, e.g. "Integration with id X not found". */
export class NotFoundError extends DomainError {
  readonly code = 'not_found' as const;
  static entity(entity: string, id: string): NotFoundError {
    return new NotFoundError(`${entity} with id ${id} not found`);
  }
  static subscriber(subscriberId: string): NotFoundError {
    return new NotFoundError(`Subscriber: ${subscriberId} was not found`);
  }
}

/** 400. Each entry of `messages` names the field it is about ("limit must be <= 50"). */
export class ValidationError extends DomainError {
  readonly code = 'validation' as const;
  constructor(readonly messages: string[]) {
    super(messages.join('; '));
  }
}

/** 409: duplicate identifier or subscriberId, idempotency key in progress. */
export class ConflictError extends DomainError {
  readonly code = 'conflict' as const;
  constructor(message: string, readonly retryAfterSeconds?: number) {
    super(message);
  }
}

/**
 * 422: a request that is well-formed but cannot be honoured (unknown workflow on trigger,
 * idempotency key reused with another body). `errors` is the per-field shape Novu clients parse.
 */
export class UnprocessableError extends DomainError {
  readonly code = 'unprocessable' as const;
  constructor(message: string, readonly errors: Record<string, { messages: string[]; value: unknown }> = {}) {
    super(message);
  }
}

export class UnauthorizedError extends DomainError {
  readonly code = 'unauthorized' as const;
}

/** 403: an authenticated caller that may not do this (a viewer's write, a missing CSRF token). */
export class ForbiddenError extends DomainError {
  readonly code = 'forbidden' as const;
}

export class RateLimitedError extends DomainError {
  readonly code = 'rate_limited' as const;
  constructor(
    readonly retryAfterSeconds: number,
    message = 'API rate limit exceeded',
  ) {
    super(message);
  }
}

/** 503: the database or queue cannot be reached right now. */
export class UnavailableError extends DomainError {
  readonly code = 'unavailable' as const;
  constructor(message = 'Service temporarily unavailable', readonly retryAfterSeconds = 5) {
    super(message);
  }
}
