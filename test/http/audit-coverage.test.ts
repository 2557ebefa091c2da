import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDITED_OPERATIONS, UNAUDITED_DELETE_ROUTES } from '../../src/http/audit.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Every route the app registers, as `METHOD /path`, read from Fastify's own route tree (`printRoutes`), which
 * nests a route under the longest registered path it extends: `/v2/topics/:topicKey` then `└── /subscriptions`.
 */
function registeredRoutes(tree: string): string[] {
  const routes: string[] = [];
  const pathAtDepth: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ]   )*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    const path = (depth > 0 ? pathAtDepth[depth - 1] : '') + match[2];
    pathAtDepth[depth] = path;
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) routes.push(`${method} ${path}`);
  }
  return routes;
}

describe('audit log coverage', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
    // A request and a queue round trip, so that in scale-out mode the Redis connections are up before close.
    expect((await server.request('GET', '/v1/notifications')).status).toBe(200);
    await server.waitForIdle();
  });
  afterAll(async () => server?.close());

  it('reads the route tree it checks (known routes of several methods are found)', () => {
    const routes = registeredRoutes(server.app.printRoutes({ commonPrefix: false }));
    for (const route of ['GET /v1/notifications', 'DELETE /v1/messages/:messageId', 'DELETE /v2/topics/:topicKey/subscriptions', 'POST /v1/integrations/:integrationId/set-primary']) {
      expect(routes).toContain(route);
    }
  });

  it('audits every DELETE route except the commented allow-list', () => {
    const deletes = registeredRoutes(server.app.printRoutes({ method: 'DELETE', commonPrefix: false })).filter((route) => route.startsWith('DELETE '));
    expect(deletes.length).toBeGreaterThan(10);
    const escaping = deletes.filter((route) => !AUDITED_OPERATIONS[route] && !UNAUDITED_DELETE_ROUTES[route]);
    expect(escaping).toEqual([]);
    // Both tables name only routes that exist, and no route is in both.
    const all = registeredRoutes(server.app.printRoutes({ commonPrefix: false }));
    expect(Object.keys(AUDITED_OPERATIONS).filter((route) => !all.includes(route))).toEqual([]);
    expect(Object.keys(UNAUDITED_DELETE_ROUTES).filter((route) => !deletes.includes(route) || AUDITED_OPERATIONS[route])).toEqual([]);
  });
});
