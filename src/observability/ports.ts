/**
 * What the engine, the worker, the queue and the HTTP layer know of metrics and tracing: plain interfaces, so that
 * nothing outside src/observability/ imports prom-client or OpenTelemetry. `container.ts` picks the implementations
 * (observability/metrics.ts and tracing.ts, loaded only when on; the no-ops in noop.ts otherwise).
 */

/** Outcomes of one queue job or step run (`herald_jobs_total{status}`). */
export type JobStatusLabel = 'completed' | 'skipped' | 'delayed' | 'merged' | 'failed' | 'retry';

/**
 * Recorders behind the `herald_*` metric families (docs/operations-observability.md). Every label value is from a
 * small fixed set (step types, channels, provider ids, statuses): never a subscriber, transaction or record id.
 */
export interface Metrics {
  /** Triggers accepted (one per recipient list; a repeated transactionId is not counted again). */
  triggersAccepted(count: number): void;
  /** One queue job or step run ended: `type` is the step type for step runs, else the job name. */
  jobFinished(type: string, status: JobStatusLabel, seconds: number): void;
  /** One message recorded for a channel step (`status` = the message's status: sent, warning, error). */
  delivery(channel: string, providerId: string | undefined, status: string): void;
  /** One call to a provider's send, whatever its result. */
  providerRequest(providerId: string, seconds: number): void;
  /** One outbound webhook delivery attempt (`status`: e.g. success, failed, retry). */
  webhookDelivery(status: string): void;
  /** One answered HTTP request; `route` is the route template (or `unmatched`), never a raw URL. */
  httpRequest(method: string, route: string, statusCode: number, seconds: number): void;
  /** Adds the open sockets of one socket server to `herald_realtime_connections`, read at scrape time. Returns its remover. */
  trackRealtimeConnections(count: () => number): () => void;
  /** The exposition text, or undefined when metrics are off. */
  scrape(): Promise<{ contentType: string; body: string } | undefined>;
}

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

export interface SpanHandle {
  setAttributes(attributes: SpanAttributes): void;
  updateName(name: string): void;
}

export interface SpanOptions {
  kind?: 'internal' | 'server' | 'client' | 'producer' | 'consumer';
  attributes?: SpanAttributes;
  /**
   * The parent as a W3C traceparent (carried in a job payload): when the key is present the span is a child of it
   * (a new trace when it is undefined), not of the span active in this async context.
   */
  parent?: string | undefined;
}

/** The server span of one HTTP request, for the HTTP layer. */
export interface RequestSpan {
  /** Runs `fn` (the rest of the request's handling) with this span active. */
  enter(fn: () => void): void;
  end(route: string, statusCode: number): void;
}

/** OpenTelemetry tracing, or nothing when it is off (every method is then a no-op that costs a call). */
export interface Tracing {
  readonly enabled: boolean;
  /** The active span as a W3C traceparent, to carry in a job payload; undefined when tracing is off or no span is active. */
  traceparent(): string | undefined;
  /** Runs `fn` inside a new span; an error thrown by `fn` marks the span failed and is rethrown. */
  span<T>(name: string, options: SpanOptions, fn: (span: SpanHandle) => Promise<T>): Promise<T>;
  /** Starts the server span of a request (child of its `traceparent` header when valid); undefined when off. */
  startRequestSpan(method: string, route: string, path: string, traceparentHeader: string | undefined): RequestSpan | undefined;
  /** Exports the spans still batched and stops. */
  shutdown(): Promise<void>;
}

/** What a step run found out, filled in by the engine for the job's span and metrics. */
export interface StepObservation {
  workflowId?: string;
  stepType?: string;
  providerId?: string;
  outcome?: string;
}
