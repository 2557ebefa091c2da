import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, defaultTextMapGetter, defaultTextMapSetter, trace, type Context, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '../config.js';
import type { RequestSpan, SpanAttributes, SpanHandle, SpanOptions, Tracing } from './ports.js';

const KINDS: Record<NonNullable<SpanOptions['kind']>, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

const propagator = new W3CTraceContextPropagator();
let contextManagerSet = false;

/**
 * OpenTelemetry tracing (loaded by container.ts only when an OTLP endpoint is configured). The tracer provider is
 * this process's own, not registered globally, so that several containers in one process (tests) do not share one;
 * only the async context manager is global (there is one per process by nature).
 */
export async function createTracing(config: TracingConfig, version: string): Promise<Tracing> {
  if (!contextManagerSet) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  const exporter: SpanExporter =
    config.protocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url: config.url, headers: config.headers })
      : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter({ url: config.url, headers: config.headers });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': version, 'process.pid': process.pid }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: config.batchDelayMs })],
  });
  const tracer = provider.getTracer('herald', version);

  const parentOf = (traceparent: string | undefined): Context =>
    traceparent ? propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter) : ROOT_CONTEXT;
  const handle = (span: Span): SpanHandle => ({
    setAttributes: (attributes) => span.setAttributes(defined(attributes)),
    updateName: (name) => span.updateName(name),
  });

  return {
    enabled: true,
    traceparent() {
      if (!trace.getSpan(context.active())) return undefined;
      const carrier: Record<string, string> = {};
      propagator.inject(context.active(), carrier, defaultTextMapSetter);
      return carrier.traceparent;
    },
    async span(name, options, fn) {
      const parent = 'parent' in options ? parentOf(options.parent) : context.active();
      const span = tracer.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes: defined(options.attributes ?? {}) }, parent);
      try {
        return await context.with(trace.setSpan(parent, span), () => fn(handle(span)));
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        throw error;
      } finally {
        span.end();
      }
    },
    startRequestSpan(method, route, path, traceparentHeader): RequestSpan {
      const parent = parentOf(traceparentHeader);
      const span = tracer.startSpan(
        `${method} ${route}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route, 'url.path': path } },
        parent,
      );
      const active = trace.setSpan(parent, span);
      return {
        enter: (fn) => context.with(active, fn),
        end(finalRoute, statusCode) {
          span.setAttributes({ 'http.route': finalRoute, 'http.response.status_code': statusCode });
          if (finalRoute !== route) span.updateName(`${method} ${finalRoute}`);
          if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}

function defined(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const result: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) result[key] = value;
  return result;
}
