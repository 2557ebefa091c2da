import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { createTracing } from '../../src/observability/tracing.js';

/** OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (the default): spans leave as OTLP protobuf on the configured URL. */
let collector: HttpFake;
beforeAll(async () => {
  collector = await startHttpFake(() => ({ status: 200, body: '' }));
});
afterAll(async () => collector?.close());

describe('the http/protobuf exporter', () => {
  it('posts the spans to the traces URL with the configured headers, and a child carries its parent trace', async () => {
    const tracing = await createTracing(
      { url: `${collector.url}/v1/traces`, protocol: 'http/protobuf', headers: { 'x-collector-token': 'tok' }, serviceName: 'herald-proto', batchDelayMs: 50 },
      '0.0.0-test',
    );
    let carried: string | undefined;
    await tracing.span('outer-span-name', { kind: 'server' }, async () => {
      carried = tracing.traceparent();
    });
    expect(carried).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await tracing.span('inner-span-name', { parent: carried, kind: 'consumer' }, async () => {
      expect(tracing.traceparent()!.slice(0, 35)).toBe(carried!.slice(0, 35));
    });
    await tracing.shutdown();
    const exports = collector.requests.filter((request) => request.path === '/v1/traces');
    expect(exports.length).toBeGreaterThan(0);
    for (const request of exports) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/x-protobuf');
      expect(request.headers['x-collector-token']).toBe('tok');
    }
    const body = exports.map((request) => request.body).join('');
    for (const text of ['outer-span-name', 'inner-span-name', 'herald-proto']) expect(body).toContain(text);
  });
});
