import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserAvailable, collectPageErrors, launchBrowser } from '../helpers/browser.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { DESKTOP, createFirstAdministrator, eventually, seriousViolations, visible } from './dashboard-browser.js';
import { startHeraldUnderTest, type HeraldUnderTest } from './herald-under-test.js';

/**
 * The Webhooks page in Debian's Chromium against a real Herald (embedded `herald start`, or scaled out with separate
 * API and worker processes): an admin adds an endpoint, sends a test event, sees the attempt and resends it; the
 * local receiver verifies both with the secret the page showed. A viewer sees the endpoint but no secret.
 */
const run = browserAvailable() ? describe : describe.skip;
const ADMIN = { email: 'hooks-admin@example.com', password: 'correct horse battery', name: 'Hook Admin' };
const VIEWER = { email: 'hooks-viewer@example.com', password: 'viewer password 1', name: 'Hook Viewer' };

run('the Webhooks page in the browser', () => {
  let herald: HeraldUnderTest;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  let endpointPath = '';

  async function newPage(context: BrowserContext): Promise<Page> {
    const created = await context.newPage();
    created.setDefaultTimeout(15_000);
    pageErrors.push(...collectPageErrors(created));
    return created;
  }

  async function nav(target: Page, section: string) {
    await target.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: section, exact: true }).click();
    await target.getByRole('heading', { level: 1, name: section }).waitFor();
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    herald = await startHeraldUnderTest({ HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_RATE_LIMIT: 'false', HERALD_WEBHOOK_RELAY_MS: '50' });
    browser = await launchBrowser();
    admin = await browser.newContext({ viewport: DESKTOP });
    page = await newPage(admin);
    await createFirstAdministrator(page, herald.setupUrl(), ADMIN);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await herald?.close();
    await receiver?.close();
  }, 60_000);

  it('an admin adds an endpoint, sends a test event, sees the attempt and resends it', { timeout: 120_000 }, async () => {
    await nav(page, 'Webhooks');
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/dash`);
    await page.getByLabel('Description').fill('orders service');
    await page.getByLabel('message.failed').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    receiver.secrets.push(secret);
    const violations = await seriousViolations(page);
    expect(violations, JSON.stringify(violations)).toEqual([]);

    await page.getByRole('link', { name: `${receiver.url}/dash` }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
    endpointPath = new URL(page.url()).pathname;
    await page.getByRole('button', { name: 'Send test event' }).click();
    const [first] = await receiver.waitFor((w) => w.path === '/dash' && w.body.type === 'webhook.test');
    expect(first.verifiedWith).toEqual([0]);

    // The attempt appears in the log (the page polls), with the receiver's answer.
    const row = page.getByRole('row').filter({ hasText: 'webhook.test' });
    await visible(row.first(), 15_000);
    await eventually('the attempt shows success', async () => (await row.first().textContent())?.includes('success') ?? false, 15_000);
    expect(await row.first().textContent()).toContain('HTTP 204');
    expect(await row.first().textContent()).toContain(first.id);

    await row.first().getByRole('button', { name: 'Resend' }).click();
    await page.getByText('Event queued again.').waitFor();
    const both = await receiver.waitFor((w) => w.path === '/dash' && w.body.type === 'webhook.test', 2);
    expect(both[1].id).toBe(first.id);
    expect(both[1].verifiedWith).toEqual([0]);
    await eventually('two attempts listed', async () => (await page.getByRole('row').filter({ hasText: 'webhook.test' }).count()) === 2, 15_000);

    // Reveal shows the same secret.
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    expect(await page.getByLabel('Signing secret').inputValue()).toBe(secret);
    expect(pageErrors).toEqual([]);
  });

  it('a viewer sees the endpoint and its attempts, but no secret and no actions', { timeout: 120_000 }, async () => {
    const invite = await page.evaluate(async () => {
      const me = await (await fetch('/v1/dashboard/me')).json();
      const response = await fetch('/v1/dashboard/invites', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': me.data.csrfToken },
        body: JSON.stringify({ role: 'viewer' }),
      });
      return (await response.json()).data.url as string;
    });
    const viewer = await browser.newContext({ viewport: DESKTOP });
    const viewerPage = await newPage(viewer);
    await viewerPage.goto(herald.url + invite.replace(/^https?:\/\/[^/]+/, ''));
    await viewerPage.getByLabel('Name').fill(VIEWER.name);
    await viewerPage.locator('input[type=email]').fill(VIEWER.email);
    await viewerPage.locator('input[type=password]').fill(VIEWER.password);
    await viewerPage.getByRole('button', { name: 'Create account' }).click();
    await viewerPage.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();

    await nav(viewerPage, 'Webhooks');
    await viewerPage.getByRole('link', { name: `${receiver.url}/dash` }).waitFor();
    expect(await viewerPage.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
    await viewerPage.goto(herald.url + endpointPath);
    await viewerPage.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
    await visible(viewerPage.getByRole('row').filter({ hasText: 'webhook.test' }).first(), 15_000);
    for (const name of ['Reveal secret', 'Rotate secret', 'Send test event', 'Resend', 'Delete']) {
      expect(await viewerPage.getByRole('button', { name }).count(), name).toBe(0);
    }
    const id = endpointPath.split('/').pop();
    const status = await viewerPage.evaluate(async (endpointId) => (await fetch(`/v2/webhooks/endpoints/${endpointId}/secret`)).status, id);
    expect(status).toBe(403);
    expect(await viewerPage.content()).not.toContain('whsec_');
    await viewer.close();
    expect(pageErrors).toEqual([]);
  });
});
