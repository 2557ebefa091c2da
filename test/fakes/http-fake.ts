import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received, body as text. */
export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON. */
  body?: unknown;
}

/** Returns the reply; `'hang'` never answers (for timeout tests). */
export type FakeHandler = (request: RecordedRequest) => FakeReply | 'hang' | Promise<FakeReply | 'hang'>;

export interface HttpFake {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Replace the handler between calls (e.g. 500 then 200). */
  setHandler(handler: FakeHandler): void;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 that records every request and answers through `handler`. */
export async function startHttpFake(handler: FakeHandler = () => ({ status: 200, body: {} })): Promise<HttpFake> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const reply = await current(recorded);
      if (reply === 'hang') return;
      const isText = typeof reply.body === 'string' || reply.body === undefined;
      const body = isText ? ((reply.body as string | undefined) ?? '') : JSON.stringify(reply.body);
      const headers = { ...(isText ? {} : { 'content-type': 'application/json' }), ...reply.headers };
      res.writeHead(reply.status ?? 200, headers).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    setHandler: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound then released). */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
