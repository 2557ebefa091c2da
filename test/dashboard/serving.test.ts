import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_DIST } from '../../src/http/dashboard.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** The dashboard's static files as Herald serves them (built by the vitest globalSetup). */
describe('dashboard serving', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('serves index.html at /dashboard/ without an API key, with a CSP and no caching', async () => {
    const response = await server.request('GET', '/dashboard/', { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.text).toContain('<div id="root"></div>');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
  });

  it('redirects /dashboard to /dashboard/', async () => {
    const response = await fetch(`${server.url}/dashboard`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/dashboard/');
    await response.arrayBuffer();
  });

  it('answers client routes under /dashboard with index.html (reload on any page works)', async () => {
    for (const path of ['/dashboard/activity', '/dashboard/activity/0123456789abcdef01234567', '/dashboard/setup?token=abc', '/dashboard/workflows/new']) {
      const response = await server.request('GET', path, { key: null });
      expect(response.status, path).toBe(200);
      expect(response.text, path).toContain('<div id="root"></div>');
    }
  });

  it('serves the hashed assets the page names, cached as immutable', async () => {
    const index = await server.request('GET', '/dashboard/', { key: null });
    const scripts = [...index.text.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((found) => found[1]);
    expect(scripts.length).toBeGreaterThanOrEqual(2);
    for (const path of scripts) {
      const asset = await fetch(server.url + path, { headers: { 'accept-encoding': 'br, gzip' } });
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      expect(asset.headers.get('content-type')).toMatch(path.endsWith('.js') ? /javascript/ : /css/);
      // Pre-compressed at build time; fetch decodes it.
      expect(asset.headers.get('content-encoding')).toBe('br');
      expect((await asset.text()).length).toBeGreaterThan(1000);
    }
    const plain = await fetch(server.url + scripts[0], { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect((await plain.arrayBuffer()).byteLength).toBeGreaterThan(10_000); // read it: an unread body keeps the connection busy
    const built = readdirSync(join(DASHBOARD_DIST, 'assets'));
    expect(built.some((name) => scripts.some((path) => path.endsWith(name)))).toBe(true);
  });

  it('answers a missing asset with 404 and never serves files outside the build', async () => {
    expect((await server.request('GET', '/dashboard/assets/missing.js', { key: null })).status).toBe(404);
    for (const path of ['/dashboard/assets/..%2F..%2F..%2Fpackage.json', '/dashboard/assets/%2e%2e/%2e%2e/%2e%2e/package.json']) {
      const response = await server.request('GET', path, { key: null });
      expect(response.text, path).not.toContain('"name": "herald"');
    }
  });

  it('redirects a browser opening / to the dashboard, while API clients get JSON', async () => {
    const browser = await fetch(`${server.url}/`, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('location')).toBe('/dashboard/');
    await browser.arrayBuffer();

    const client = await fetch(`${server.url}/`, { headers: { accept: 'application/json' } });
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toContain('application/json');
    expect((await client.json()).data).toMatchObject({ dashboard: '/dashboard/', openapi: '/openapi.json' });
  });

  it('leaves the API authenticated: the dashboard routes open nothing else', async () => {
    expect((await server.request('GET', '/v1/notifications', { key: null })).status).toBe(401);
    expect((await server.request('GET', '/dashboardx', { key: null })).status).toBe(401);
  });
});
