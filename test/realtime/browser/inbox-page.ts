import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * The browser test's front end: inbox-app.jsx bundled for the browser with esbuild (the `browser` export conditions
 * matter: @novu/react's server build renders nothing, inbox-client-protocol.md §7) and served by a tiny static
 * server on its own port, so the page's origin differs from Herald's and every call is cross-origin.
 */
const ENTRY = fileURLToPath(new URL('./inbox-app.jsx', import.meta.url));

let bundled: Promise<string> | undefined;

export function bundleInboxApp(): Promise<string> {
  bundled ??= build({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    logLevel: 'silent',
  }).then((result) => result.outputFiles[0]!.text);
  return bundled;
}

export interface InboxPageSettings {
  applicationIdentifier: string;
  subscriberId: string;
  backendUrl: string;
  socketUrl: string;
}

export interface InboxPageServer {
  url: string;
  close(): Promise<void>;
}

export async function serveInboxPage(settings: InboxPageSettings): Promise<InboxPageServer> {
  const script = await bundleInboxApp();
  const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>Herald Inbox</title>
<style>body { font-family: system-ui, sans-serif; margin: 0; padding: 24px 24px 24px 360px; background: #f5f5f7; min-height: 720px; }</style>
</head><body><div id="root"></div>
<script>window.HERALD_INBOX = ${JSON.stringify(settings)};</script>
<script type="module" src="/app.js"></script></body></html>`;
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/' || path === '/index.html') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    } else if (path === '/app.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    // localhost, not 127.0.0.1: another host as well as another port (navigator.locks needs a secure context, which
    // localhost is).
    url: `http://localhost:${port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
