import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/**
 * The legacy widget browser test's front end: widget-app.jsx bundled for the browser with esbuild and served by a
 * tiny static server on its own port (another origin than Herald's). The page runs on React 18, as apps that embed
 * @novu/notification-center 2.0.0 do, while the dashboard keeps React 19: React 18 is installed apart, as the
 * dependencies of the local `file:` dev dependency herald-test-react18 (test/realtime/browser/react18, installed as a
 * copy in node_modules: .npmrc), and every import of react or react-dom in the bundle (the page's, the widget's, its
 * libraries') is resolved there.
 */
const ENTRY = fileURLToPath(new URL('./widget-app.jsx', import.meta.url));
const react18 = createRequire(createRequire(import.meta.url).resolve('herald-test-react18/package.json'));

/** react, react-dom and their subpaths (react/jsx-runtime, react-dom/client) from the React 18 install. */
const react18Plugin: Plugin = {
  name: 'react18',
  setup(build) {
    build.onResolve({ filter: /^react(-dom)?(\/.*)?$/ }, (args) => ({ path: react18.resolve(args.path) }));
  },
};

let bundled: Promise<string> | undefined;

export function bundleWidgetApp(): Promise<string> {
  bundled ??= build({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    plugins: [react18Plugin],
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    write: false,
    logLevel: 'silent',
  }).then((result) => result.outputFiles[0]!.text);
  return bundled;
}

/** The React version the bundle runs (what `React.version` says in the page). */
export function bundledReactVersion(): string {
  return (react18('react/package.json') as { version: string }).version;
}

export interface WidgetPageSettings {
  applicationIdentifier: string;
  subscriberId: string;
  subscriberHash?: string;
  backendUrl: string;
  socketUrl: string;
}

export interface WidgetPageServer {
  /** The page with these settings; `overrides` change them for one URL (a wrong hash). */
  url(overrides?: Partial<WidgetPageSettings>): string;
  close(): Promise<void>;
}

export async function serveWidgetPage(settings: WidgetPageSettings): Promise<WidgetPageServer> {
  const script = await bundleWidgetApp();
  const html = (pageSettings: WidgetPageSettings) => `<!doctype html>
<html><head><meta charset="utf-8"><title>Herald legacy widget</title><link rel="icon" href="data:,">
<style>body { font-family: system-ui, sans-serif; margin: 0; padding: 24px 120px 24px 24px; background: #f5f5f7; min-height: 720px; } #root { display: flex; justify-content: flex-end; }</style>
</head><body><div id="root"></div>
<script>window.HERALD_WIDGET = ${JSON.stringify(pageSettings)};</script>
<script type="module" src="/app.js"></script></body></html>`;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/' || url.pathname === '/index.html') {
      const overrides = url.searchParams.get('settings');
      const pageSettings = overrides ? { ...settings, ...(JSON.parse(overrides) as Partial<WidgetPageSettings>) } : settings;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html(pageSettings));
    } else if (url.pathname === '/app.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // localhost, not 127.0.0.1: another host as well as another port than Herald's.
  const base = `http://localhost:${port}/`;
  return {
    url: (overrides) => (overrides ? `${base}?settings=${encodeURIComponent(JSON.stringify(overrides))}` : base),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
