import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './error-handler.js';

/**
 * Where `npm run build:web` (vite, web/vite.config.ts) writes the dashboard. Relative to this module, which is two
 * levels below the repository root both as a source (src/http/) and compiled (dist/server/, scripts/build-server.mjs).
 */
export const DASHBOARD_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../../web/dist');

export const DASHBOARD_PREFIX = '/dashboard';

/**
 * The dashboard is static files: public (the page itself asks for a sign-in; every API call it makes is
 * authenticated), served by every API process so embedded and scale-out serve the same thing.
 * Vite hashes asset names, so they are cached for a year; index.html is revalidated each time so a new
 * release is picked up on the next load. Any other path under /dashboard is a client route: index.html.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  // Rendered emails (in a sandboxed frame without scripts) load their own images and inline styles.
  "img-src 'self' data: https: http:",
  "style-src 'self' 'unsafe-inline'",
  "frame-src 'self' about:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

export const dashboardPlugin = fp(async (app: FastifyInstance, opts: { distDir?: string }) => {
  const distDir = opts.distDir ?? DASHBOARD_DIST;
  const built = existsSync(resolve(distDir, 'index.html'));
  // preCompressed: the build writes .br/.gz next to each asset (scripts/build-web.mjs).
  await app.register(fastifyStatic, { root: distDir, serve: false, decorateReply: true, preCompressed: true });

  const sendIndex = (request: FastifyRequest, reply: FastifyReply) => {
    if (!built) {
      return reply
        .status(503)
        .send(errorBody(request, 503, 'The dashboard is not built: run "npm run build:web" (npm start does it)'));
    }
    reply.header('cache-control', 'no-cache');
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    return reply.sendFile('index.html', { cacheControl: false });
  };

  const publicRoute = { config: { public: true }, schema: { hide: true } } as const;
  app.get(DASHBOARD_PREFIX, publicRoute, (request, reply) => reply.redirect(`${DASHBOARD_PREFIX}/`, 302));
  app.get(`${DASHBOARD_PREFIX}/`, publicRoute, sendIndex);
  app.get(`${DASHBOARD_PREFIX}/*`, publicRoute, (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    // Hashed build output; `send` (under sendFile) refuses paths that leave the root.
    if (path.startsWith('assets/') || path === 'favicon.svg') {
      reply.header('cache-control', path.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=3600');
      reply.header('x-content-type-options', 'nosniff');
      return reply.sendFile(path, { cacheControl: false });
    }
    return sendIndex(request, reply);
  });

  // A browser opening the server's root lands on the dashboard; API clients (no text/html) get JSON.
  app.get('/', publicRoute, async (request, reply) => {
    if ((request.headers.accept ?? '').includes('text/html')) return reply.redirect(`${DASHBOARD_PREFIX}/`, 302);
    return { data: { name: 'Herald', dashboard: `${DASHBOARD_PREFIX}/`, openapi: '/openapi.json', docs: '/docs', health: '/health' } };
  });
});
