import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { AUDITED_OPERATIONS, UNAUDITED_DELETE_ROUTES } from '../../src/http/audit.js';
import { buildApp } from '../../src/http/app.js';

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

// The routes registered do not depend on the mode: the app is built over an embedded container in both test modes
// (nothing listens, nothing connects to Redis).
describe('audit log coverage', () => {
  let dataDir: string;
  let container: Container;
  let app: FastifyInstance;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'herald-audit-coverage-'));
    container = await createContainer(loadConfig({ HERALD_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }));
    app = await buildApp(container.deps);
  });
  afterAll(async () => {
    await app?.close();
    await container?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads the route tree it checks (known routes of several methods are found)', () => {
    const routes = registeredRoutes(app.printRoutes({ commonPrefix: false }));
    for (const route of ['GET /v1/notifications', 'DELETE /v1/messages/:messageId', 'DELETE /v2/topics/:topicKey/subscriptions', 'POST /v1/integrations/:integrationId/set-primary']) {
      expect(routes).toContain(route);
    }
  });

  it('audits every DELETE route except the commented allow-list', () => {
    const deletes = registeredRoutes(app.printRoutes({ method: 'DELETE', commonPrefix: false })).filter((route) => route.startsWith('DELETE '));
    expect(deletes.length).toBeGreaterThan(10);
    const escaping = deletes.filter((route) => !AUDITED_OPERATIONS[route] && !UNAUDITED_DELETE_ROUTES[route]);
    expect(escaping).toEqual([]);
    // Both tables name only routes that exist, and no route is in both.
    const all = registeredRoutes(app.printRoutes({ commonPrefix: false }));
    expect(Object.keys(AUDITED_OPERATIONS).filter((route) => !all.includes(route))).toEqual([]);
    expect(Object.keys(UNAUDITED_DELETE_ROUTES).filter((route) => !deletes.includes(route) || AUDITED_OPERATIONS[route])).toEqual([]);
  });
});
