import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

/**
 * Fastify gives every request a child of the app's logger (`request.log`, bound to its `reqId`). Making a pino child
 * costs ~1.2-3 µs (micro-benchmark, session 18) and most requests never log through it: the request line has its own
 * logger (app.ts), and only errors and warnings use `request.log`. This stands in for the child and makes it at the
 * first line logged, with the same bindings and options, so those lines are the bytes the child writes.
 */
export class LazyRequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): FastifyBaseLogger['level'] {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: FastifyBaseLogger['level']) {
    this.logger.level = level;
  }

  // Methods on the prototype, not arrow fields: nothing is allocated per request but the object itself.
  fatal(...args: unknown[]): void {
    forward(this.logger, 'fatal', args);
  }

  error(...args: unknown[]): void {
    forward(this.logger, 'error', args);
  }

  warn(...args: unknown[]): void {
    forward(this.logger, 'warn', args);
  }

  info(...args: unknown[]): void {
    forward(this.logger, 'info', args);
  }

  debug(...args: unknown[]): void {
    forward(this.logger, 'debug', args);
  }

  trace(...args: unknown[]): void {
    forward(this.logger, 'trace', args);
  }

  silent(...args: unknown[]): void {
    forward(this.logger, 'silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
function forward(logger: FastifyBaseLogger, level: Level, args: unknown[]): void {
  (logger[level] as (...args: unknown[]) => void).apply(logger, args);
}

/** Fastify's `childLoggerFactory`: a LazyRequestLogger in place of `logger.child(bindings, options)`. */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}
