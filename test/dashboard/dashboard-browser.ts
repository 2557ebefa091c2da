import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';

/** Shared steps of the dashboard's browser tests: sign-in, axe-core checks, screenshots. */
const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
/** docs/screenshots is rewritten on request only (HERALD_UPDATE_SCREENSHOTS=1), so a test run leaves the tree clean. */
export const SCREENSHOT_DIR = process.env.HERALD_UPDATE_SCREENSHOTS === '1' ? join(root, 'docs/screenshots') : join(tmpdir(), 'herald-dashboard-screenshots');
const AXE_SOURCE = readFileSync(join(root, 'node_modules/axe-core/axe.min.js'), 'utf8');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Runs axe-core in the page; returns the serious and critical violations (what the brief forbids). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe !== 'undefined');
  // Evaluated through the DevTools protocol: the dashboard's CSP (no inline scripts) does not apply to it.
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.slice(0, 5).map((node) => JSON.stringify(node.target)),
    }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/** Screenshots are written by the embedded run only (the scale-out run shows the same pages). */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env.HERALD_TEST_MODE === 'scaleout') return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // Chromium paints a frame (a rendered email) only while it is inside the viewport, so a full-page shot would show
  // frames below the fold blank: the viewport is made as tall as the page for the shot instead.
  const viewport = page.viewportSize();
  const fullPage = options.fullPage ?? true;
  if (fullPage && viewport) {
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: viewport.width, height: Math.max(viewport.height, height) });
    await page.waitForTimeout(300);
  }
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`) });
  if (fullPage && viewport) await page.setViewportSize(viewport);
}

/** Creates the first administrator through the setup link the first start printed, and waits for the Overview. */
export async function createFirstAdministrator(page: Page, setupUrl: string, admin: { name: string; email: string; password: string }): Promise<void> {
  await page.goto(setupUrl);
  await page.getByLabel('Name').fill(admin.name);
  await page.locator('input[type=email]').fill(admin.email);
  await page.locator('input[type=password]').fill(admin.password);
  await page.getByRole('button', { name: 'Create administrator' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

/** Signs in through the login page, as a person would. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/`);
  await page.locator('input[type=email]').fill(email);
  await page.locator('input[type=password]').fill(password);
  await page.locator('button[type=submit]').click();
  // The sign-out button is in the top bar at every width (the navigation folds into a menu on phones).
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The page is no wider than the viewport: nothing cut off or scrolled sideways (tables scroll inside their frame). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/** Polls until `check` is true (playwright-core has no web-first assertions); the error names what was awaited. */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // the element may be re-rendering; ask again
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the locator's (first) element has exactly this text. */
export async function hasText(locator: Locator, text: string, timeoutMs = 10_000): Promise<void> {
  await eventually(`text "${text}" (${locator})`, async () => (await locator.first().textContent())?.trim() === text, timeoutMs);
}

export async function visible(locator: Locator, timeoutMs = 10_000): Promise<void> {
  await locator.first().waitFor({ state: 'visible', timeout: timeoutMs });
}

export async function hasCount(locator: Locator, count: number, timeoutMs = 10_000): Promise<void> {
  await eventually(`${count} of ${locator}`, async () => (await locator.count()) === count, timeoutMs);
}
