import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './ports.js';
import { bearerCheck } from './http-plugin.js';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` for a process without an HTTP server of its own (the scale-out worker), on HERALD_METRICS_PORT.
 * Answers only that path; errors in the shape of the API's error bodies.
 */
export async function serveMetrics(metrics: Metrics, options: { host: string; port: number; token?: string }): Promise<MetricsServer> {
  const allowed = options.token === undefined ? undefined : bearerCheck(options.token);
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const fail = (statusCode: number, message: string, headers: Record<string, string> = {}) => {
      response.writeHead(statusCode, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(JSON.stringify({ statusCode, message, error: statusCode === 401 ? 'Unauthorized' : statusCode === 404 ? 'Not Found' : 'Method Not Allowed' }));
    };
    if (path !== '/metrics') return fail(404, `Route ${request.method}:${path} not found`);
    if (request.method !== 'GET' && request.method !== 'HEAD') return fail(405, 'Only GET /metrics', { allow: 'GET, HEAD' });
    if (allowed && !allowed(request.headers.authorization)) return fail(401, '/metrics needs Authorization: Bearer <HERALD_METRICS_TOKEN>', { 'www-authenticate': 'Bearer' });
    metrics.scrape().then(
      (scraped) => {
        if (!scraped) return fail(404, 'metrics are off (HERALD_METRICS=off)');
        response.writeHead(200, { 'content-type': scraped.contentType });
        response.end(request.method === 'HEAD' ? undefined : scraped.body);
      },
      () => {
        response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify({ statusCode: 500, message: 'metrics could not be collected', error: 'Internal Server Error' }));
      },
    );
  });
  // Scrapers keep connections alive: closing must not wait for them.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
