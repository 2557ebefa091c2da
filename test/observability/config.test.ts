import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** The metrics and tracing settings config.ts reads (the only reader of process.env). */
describe('metrics settings', () => {
  it('are on, open and without a worker port by default', () => {
    expect(loadConfig({}).metrics).toEqual({ enabled: true, token: undefined, workerPort: undefined });
  });

  it('read HERALD_METRICS, HERALD_METRICS_TOKEN and HERALD_METRICS_PORT', () => {
    expect(loadConfig({ HERALD_METRICS: 'off', HERALD_METRICS_TOKEN: 't', HERALD_METRICS_PORT: '9464' }).metrics).toEqual({ enabled: false, token: 't', workerPort: 9464 });
    expect(() => loadConfig({ HERALD_METRICS: 'maybe' })).toThrow(ConfigError);
    expect(() => loadConfig({ HERALD_METRICS_PORT: '70000' })).toThrow(/HERALD_METRICS_PORT/);
  });
});

describe('tracing settings', () => {
  it('are off without an OTLP endpoint, whatever else is set', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing).toBeUndefined();
  });

  it('take the endpoint, protocol, headers and service name from the standard variables', () => {
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b, x-team = ops',
        OTEL_SERVICE_NAME: 'herald-eu',
      }).tracing,
    ).toEqual({ url: 'http://collector:4318/v1/traces', protocol: 'http/json', headers: { 'api-key': 'a b', 'x-team': 'ops' }, serviceName: 'herald-eu', batchDelayMs: 5000 });
  });

  it('default to http/protobuf and the service name herald; the traces-specific variables win', () => {
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/custom',
        OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=3',
        OTEL_BSP_SCHEDULE_DELAY: '250',
      }).tracing,
    ).toEqual({ url: 'https://traces.example/custom', protocol: 'http/protobuf', headers: { a: '1', b: '3' }, serviceName: 'herald', batchDelayMs: 250 });
  });

  it('stay off when OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'otlp' }).tracing).toBeDefined();
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, /grpc is not supported/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/xml' }, /OTEL_EXPORTER_OTLP_PROTOCOL/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }, /OTEL_EXPORTER_OTLP_HEADERS/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'perhaps' }, /OTEL_SDK_DISABLED/],
  ])('refuse a bad value at start-up: %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
