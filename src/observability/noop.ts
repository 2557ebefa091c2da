import type { Metrics, SpanHandle, Tracing } from './ports.js';

/** HERALD_METRICS=off: every recorder does nothing and there is no /metrics. */
export const noopMetrics: Metrics = {
  triggersAccepted: () => undefined,
  jobFinished: () => undefined,
  delivery: () => undefined,
  providerRequest: () => undefined,
  webhookDelivery: () => undefined,
  httpRequest: () => undefined,
  trackRealtimeConnections: () => () => undefined,
  scrape: async () => undefined,
};

const noopSpan: SpanHandle = { setAttributes: () => undefined, updateName: () => undefined };

/** Tracing off (no OTLP endpoint): OpenTelemetry is not even loaded. */
export const noopTracing: Tracing = {
  enabled: false,
  traceparent: () => undefined,
  span: (_name, _options, fn) => fn(noopSpan),
  startRequestSpan: () => undefined,
  shutdown: async () => undefined,
};
