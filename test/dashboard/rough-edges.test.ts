import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserAvailable, collectPageErrors, launchBrowser } from '../helpers/browser.js';
import { DESKTOP, PHONE, createFirstAdministrator, eventually, horizontalOverflow, signIn, visible } from './dashboard-browser.js';
import { callApi, startHeraldUnderTest, type HeraldUnderTest } from './herald-under-test.js';

/**
 * Issue #25's rough edges, in Debian's Chromium against a real Herald started as an operator starts it (embedded or,
 * with HERALD_TEST_MODE=scaleout, two API processes and a worker): a click anywhere on an Activity row opens the
 * event; the first start's keys show their last four characters; the Settings environments table fits at 390 px;
 * the subscriber page's Inbox preview shows no "Inbox by Novu" footer.
 */
const run = browserAvailable() ? describe : describe.skip;
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery', name: 'Ada Admin' };

/**
 * Each test takes several browser steps, each allowed up to 10-15 s (the page's default timeout and the helpers'
 * waits): its budget covers them adding up on a loaded machine, so a slow run fails at the slow step with its message
 * rather than with "Test timed out" at vitest's 30 s.
 */
const TEST_MS = 60_000;

run('dashboard rough edges (issue #25)', { timeout: TEST_MS }, () => {
  let herald: HeraldUnderTest;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  const api = (method: string, path: string, body?: unknown) => callApi(herald, method, path, body);

  beforeAll(async () => {
    herald = await startHeraldUnderTest({ HERALD_RATE_LIMIT: 'false' });
    browser = await launchBrowser();
    expect((await api('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true })).status).toBe(201);
    expect((await api('POST', '/v2/subscribers', { subscriberId: 'ada', email: 'ada@example.com', firstName: 'Ada' })).status).toBe(201);
    const workflow = await api('POST', '/v2/workflows', {
      workflowId: 'welcome',
      name: 'Welcome',
      steps: [{ name: 'Inbox note', type: 'in_app', controlValues: { subject: 'Welcome', body: 'Hello {{subscriber.firstName}}' } }],
    });
    expect(workflow.status).toBe(201);
    // The first administrator, through the setup link the first start printed.
    context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    pageErrors.push(...collectPageErrors(page));
    await createFirstAdministrator(page, herald.setupUrl(), ADMIN);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await herald?.close();
  }, 60_000);

  it('a click anywhere on an Activity row opens the event, not only on its time', async () => {
    const trigger = await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: {} });
    expect(trigger.status).toBe(201);
    const { transactionId } = trigger.body.data;
    await page.goto(`${herald.url}/dashboard/activity`);
    const row = page.getByRole('row').filter({ hasText: transactionId });
    await row.waitFor({ timeout: 15_000 });
    const event = (await api('GET', `/v1/notifications?transactionId=${transactionId}`)).body.data[0];
    // The subscriber cell: plain text, no link in it.
    const cell = row.locator('td[data-label="Subscriber"]');
    expect(await cell.locator('a').count()).toBe(0);
    await cell.click();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/activity/${event._id}`);
    // The status cell too, and on a phone (rows are cards there).
    await page.goBack();
    await page.getByRole('row').filter({ hasText: transactionId }).locator('td[data-label="Status"]').click();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    const phone = await browser.newContext({ viewport: PHONE });
    const phonePage = await phone.newPage();
    await signIn(phonePage, herald.url, ADMIN.email, ADMIN.password);
    await phonePage.goto(`${herald.url}/dashboard/activity`);
    await phonePage.getByRole('row').filter({ hasText: transactionId }).locator('td[data-label="Workflow"]').click();
    await phonePage.getByRole('heading', { name: 'Timeline' }).waitFor();
    await phone.close();
  });

  it("the first start's secret keys show their last four characters in Settings", async () => {
    await page.goto(`${herald.url}/dashboard/settings`);
    const keys = page.getByRole('table', { name: 'Secret keys' });
    await keys.waitFor();
    await eventually('the development key row', async () => (await keys.locator('tbody tr').count()) > 0);
    const shown = (await keys.locator('tbody td:first-child').allTextContents()).map((text) => text.trim());
    // herald-under-test starts with HERALD_BOOTSTRAP_SECRET_KEY: the first start made exactly this key.
    expect(shown).toEqual([`••••••••${herald.secretKey.slice(-4)}`]);
    // Production's first key is random and printed once: it too shows four characters, checked against the API.
    await page.getByRole('button', { name: 'Switch to production' }).click();
    await page.getByRole('heading', { name: 'Secret keys (production)' }).waitFor();
    const productionCells = page.getByRole('table', { name: 'Secret keys' }).locator('tbody td:first-child');
    await eventually('the production key row', async () => (await productionCells.count()) === 1);
    const production = (await productionCells.allTextContents()).map((text) => text.trim());
    expect(production[0]).toMatch(/^••••••••[0-9a-f]{4}$/);
    await page.getByRole('button', { name: 'Switch to development' }).click();
    await page.getByRole('heading', { name: 'Secret keys (development)' }).waitFor();
  });

  it('the Settings environments table fits at 390 px: nothing scrolls sideways and every id stays on one line', async () => {
    const phone = await browser.newContext({ viewport: PHONE });
    const phonePage = await phone.newPage();
    await signIn(phonePage, herald.url, ADMIN.email, ADMIN.password);
    await phonePage.goto(`${herald.url}/dashboard/settings`);
    const table = phonePage.getByRole('table', { name: 'Environments' });
    await table.waitFor();
    expect(await horizontalOverflow(phonePage)).toBeLessThanOrEqual(0);
    // The table inside its frame: no sideways scrolling either.
    const inner = await table.evaluate((element) => {
      const wrap = element.parentElement!;
      return wrap.scrollWidth - wrap.clientWidth;
    });
    expect(inner).toBeLessThanOrEqual(0);
    const cells = table.locator('td[data-label="ID"]');
    expect(await cells.count()).toBe(2);
    for (const cell of await cells.all()) {
      // One line: the id's text makes a single line box (it used to break over three or four).
      const lines = await cell.evaluate((element) => {
        const range = document.createRange();
        range.selectNodeContents(element);
        return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
      });
      expect(lines, `${await cell.textContent()} wraps`).toBe(1);
    }
    await phone.close();
  });

  it('the Inbox preview on a subscriber page shows no "Inbox by Novu" footer (the session answers removeNovuBranding: true)', { timeout: 90_000 }, async () => {
    const session = await fetch(`${herald.url}/v1/inbox/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ applicationIdentifier: (await api('GET', '/v1/environments/me')).body.data.identifier, subscriber: { subscriberId: 'ada' } }),
    });
    expect((await session.json()).data.removeNovuBranding).toBe(true);
    expect((await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: {} })).status).toBe(201);
    // Several loads: the branding used to depend on whether the session answered before the Inbox had mounted.
    for (let attempt = 0; attempt < 3; attempt++) {
      await page.goto(`${herald.url}/dashboard/subscribers/ada`);
      const preview = page.locator('.inbox-preview');
      await visible(preview.locator('.nv-notification'), 30_000);
      // Whatever the Inbox would show is shown by now: its list is rendered.
      await page.waitForTimeout(500);
      expect(await preview.getByText(/Inbox by/).filter({ visible: true }).count()).toBe(0);
      expect(await preview.locator('a[href*="go.novu.co"]').filter({ visible: true }).count()).toBe(0);
      expect(await preview.innerText()).not.toMatch(/Novu/);
    }
  });

  it('left no page errors', () => {
    expect(pageErrors.filter((error) => !/status of (401|403|404)/.test(error))).toEqual([]);
  });
});
