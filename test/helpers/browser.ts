import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

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
