import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as received over OTLP/HTTP JSON, flattened: attributes as plain values, with its resource's. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
  status?: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Requests that were not an OTLP JSON trace export (wrong path, content type or body). */
  rejected: string[];
  /** The headers of every accepted export. */
  exportHeaders: Array<Record<string, string | string[] | undefined>>;
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };

function plain(attributes: Array<{ key: string; value: AnyValue }> = []): Record<string, string | number | boolean> {
  const result: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    if (value.stringValue !== undefined) result[key] = value.stringValue;
    else if (value.intValue !== undefined) result[key] = Number(value.intValue);
    else if (value.boolValue !== undefined) result[key] = value.boolValue;
    else if (value.doubleValue !== undefined) result[key] = value.doubleValue;
  }
  return result;
}

/** A local OTLP/HTTP collector for tests: accepts JSON exports (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) on /v1/traces. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rejected: string[] = [];
  const exportHeaders: OtlpReceiver['exportHeaders'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !String(request.headers['content-type']).startsWith('application/json')) {
        rejected.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
        response.writeHead(415).end();
        return;
      }
      try {
        const exported = JSON.parse(body) as { resourceSpans: any[] };
        for (const resourceSpans of exported.resourceSpans) {
          const resource = plain(resourceSpans.resource?.attributes);
          for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
            for (const span of scopeSpans.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                name: span.name,
                kind: span.kind,
                attributes: plain(span.attributes),
                resource,
                status: span.status,
              });
            }
          }
        }
        exportHeaders.push(request.headers);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        rejected.push(`unparsable body: ${String(error)}`);
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    rejected,
    exportHeaders,
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) throw new Error(`spans not received in time; got: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
