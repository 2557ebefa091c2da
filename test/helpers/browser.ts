import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page, type WebSocket } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core. Nothing here downloads a browser: `.ci/run` installs the
 * `chromium` package when it is missing. Outside CI a machine without it skips the browser tests with the
 * reason printed; under CI=true a missing browser fails them.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Flags for a root, offline, headless run: no sandbox (root), no background calls to hosts we cannot reach. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  const reason = `${CHROMIUM_PATH} not found (apt-get install -y chromium)`;
  if (process.env.CI === 'true') throw new Error(`${reason}: CI=true requires the browser tests to run`);
  console.warn(`[herald tests] ${reason}: skipping browser tests`);
  return false;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

/** Collects the page's console errors and uncaught exceptions, for assertions and failure messages. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return errors;
}

/**
 * Watches a page's sockets for socket.io's connect acknowledgement (a frame "40…"), which Herald sends once the socket
 * is authenticated and in its subscriber's room. An event published before that is not replayed (as with Novu), and
 * the Inbox fetches its list and opens its socket independently, so a test that triggers "while the page is open"
 * waits for this first. Call before the page opens its socket; `joined()` says whether one has been acknowledged.
 */
export function watchSocketJoins(page: Page): { joined(): boolean; stop(): void } {
  let joined = false;
  const watch = (socket: WebSocket) => socket.on('framereceived', ({ payload }) => void (joined ||= String(payload).startsWith('40')));
  page.on('websocket', watch);
  return { joined: () => joined, stop: () => void page.off('websocket', watch) };
}

export interface RequestTracker {
  /** Resolves once no request is in flight and none has started for `quietMs` (socket.io's transport is left out). */
  settled(options?: { quietMs?: number; timeoutMs?: number }): Promise<void>;
  /** What was asked and answered, in order, with milliseconds since tracking began: for failure messages. */
  timeline(): string;
}

/** Tracks a page's requests to `origin` (its API), so a test can wait for them to settle and show them when it fails. */
export function trackRequests(page: Page, origin: string): RequestTracker {
  const started = Date.now();
  const inFlight = new Set<object>();
  const events: string[] = [];
  let lastChange = Date.now();
  const tracked = (url: string) => url.startsWith(origin) && !new URL(url).pathname.startsWith('/socket.io');
  const label = (request: { method(): string; url(): string }) => `${request.method()} ${new URL(request.url()).pathname}`;
  page.on('request', (request) => {
    if (!tracked(request.url())) return;
    inFlight.add(request);
    lastChange = Date.now();
    events.push(`+${Date.now() - started} ${label(request)}`);
  });
  const finish = (request: { method(): string; url(): string; failure?(): { errorText: string } | null }, outcome: string) => {
    if (!inFlight.delete(request)) return;
    lastChange = Date.now();
    events.push(`+${Date.now() - started} ${label(request)} ${outcome}`);
  };
  page.on('requestfinished', (request) => void request.response().then((response) => finish(request, `→ ${response?.status() ?? '?'}`)));
  page.on('requestfailed', (request) => finish(request, `failed: ${request.failure()?.errorText ?? '?'}`));
  return {
    async settled({ quietMs = 300, timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      while (inFlight.size > 0 || Date.now() - lastChange < quietMs) {
        if (Date.now() > deadline) throw new Error(`the page's requests did not settle in ${timeoutMs} ms: ${events.slice(-20).join('; ')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    timeline: () => events.slice(-30).join('; '),
  };
}
