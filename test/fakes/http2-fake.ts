import { createServer, type Http2Server, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface RecordedHttp2Request {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Http2Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface Http2Fake {
  /** `http://127.0.0.1:<port>`: cleartext HTTP/2 (h2c). */
  url: string;
  requests: RecordedHttp2Request[];
  setHandler(handler: (request: RecordedHttp2Request) => Http2Reply | 'hang'): void;
  close(): Promise<void>;
}

/** A cleartext HTTP/2 server on 127.0.0.1 recording each stream (for the APNs provider). */
export async function startHttp2Fake(handler: (request: RecordedHttp2Request) => Http2Reply | 'hang'): Promise<Http2Fake> {
  let current = handler;
  const requests: RecordedHttp2Request[] = [];
  const server: Http2Server = createServer();
  const sessions = new Set<import('node:http2').ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const recorded = { headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      const reply = current(recorded);
      if (reply === 'hang') return;
      const body = reply.body === undefined ? '' : JSON.stringify(reply.body);
      stream.respond({ ':status': reply.status, ...(body ? { 'content-type': 'application/json' } : {}), ...reply.headers });
      stream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setHandler: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}
