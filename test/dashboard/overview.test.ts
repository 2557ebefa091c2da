import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserAvailable, collectPageErrors, launchBrowser } from '../helpers/browser.js';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { DESKTOP, PHONE, SCREENSHOT_DIR, createFirstAdministrator, eventually, hasText, horizontalOverflow, screenshot, seriousViolations, signIn, visible } from './dashboard-browser.js';
import { startHeraldUnderTest, type HeraldUnderTest } from './herald-under-test.js';

/**
 * The Overview page (issue #25), the landing page after sign-in, in Debian's Chromium against a real Herald
 * (embedded `herald start`, or scaled out: two `herald api` and a `herald worker` over PostgreSQL and Redis) after
 * real deliveries: in-app steps deliver, one workflow's email fails at a local provider fake. Every number the page
 * shows is checked against GET /v1/dashboard/overview. Screenshots: docs/screenshots/overview.png and
 * overview-phone.png (embedded), overview-scaleout.png (scale-out), written under HERALD_UPDATE_SCREENSHOTS=1.
 */
const run = browserAvailable() ? describe : describe.skip;
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery', name: 'Ada Admin' };

/** The page's number formats (web/src/pages/Overview.tsx), for comparing with the API's numbers. */
const number = new Intl.NumberFormat();
const percent = (rate: number | undefined) => (rate === undefined ? '—' : `${(rate * 100).toFixed(1)} %`);
function duration(ms: number | undefined): string {
  if (ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/**
 * Each test takes several browser steps, each allowed up to 10-15 s (the page's default timeout and the helpers'
 * waits): its budget covers them adding up on a loaded machine, so a slow run fails at the slow step with its message
 * rather than with "Test timed out" at vitest's 30 s.
 */
const TEST_MS = 60_000;

run('the Overview page', { timeout: TEST_MS }, () => {
  let herald: HeraldUnderTest;
  let fake: HttpFake;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  async function api(method: string, path: string, body?: unknown, url = herald.url) {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: `ApiKey ${herald.secretKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  beforeAll(async () => {
    // The fake mail provider refuses alert mails: those steps fail.
    fake = await startHttpFake((request) => (JSON.parse(request.body || '{}').subject === 'Alert' ? { status: 500, body: { error: 'refused' } } : { status: 200, body: { id: 'ok' } }));
    herald = await startHeraldUnderTest({ HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_JOB_ATTEMPTS: '1', HERALD_RATE_LIMIT: 'false' });
    browser = await launchBrowser();
    expect((await api('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true })).status).toBe(201);
    expect(
      (await api('POST', '/v1/integrations', { providerId: 'email-webhook', channel: 'email', active: true, check: false, credentials: { webhookUrl: `${fake.url}/mail`, secretKey: 'signing-secret', from: 'herald@example.com' } })).status,
    ).toBe(201);
    for (const subscriberId of ['ada', 'bob', 'cy']) {
      expect((await api('POST', '/v2/subscribers', { subscriberId, email: `${subscriberId}@example.com`, firstName: subscriberId })).status).toBe(201);
    }
    const workflows = [
      { workflowId: 'welcome', name: 'Welcome', steps: [{ name: 'Inbox', type: 'in_app', controlValues: { body: 'Welcome {{subscriber.firstName}}' } }, { name: 'Mail', type: 'email', controlValues: { subject: 'Welcome', body: '<p>Hi</p>' } }] },
      { workflowId: 'news', name: 'News', steps: [{ name: 'Inbox', type: 'in_app', controlValues: { body: 'News' } }] },
      { workflowId: 'alerts', name: 'Alerts', steps: [{ name: 'Mail', type: 'email', controlValues: { subject: 'Alert', body: '<p>Alert</p>' } }] },
    ];
    for (const workflow of workflows) expect((await api('POST', '/v2/workflows', workflow)).status).toBe(201);
    // Scale-out: triggers go to both API processes.
    const triggers: Array<[name: string, times: number]> = [['welcome', 2], ['news', 3], ['alerts', 1]];
    let index = 0;
    for (const [name, times] of triggers) {
      for (let i = 0; i < times; i++) {
        const url = index++ % 2 === 0 ? herald.url : herald.otherUrl;
        expect((await api('POST', '/v1/events/trigger', { name, to: ['ada', 'bob', 'cy'][i % 3] }, url)).status).toBe(201);
      }
    }
    // Every step ended: welcome 2 × (in-app + email), news 3 × in-app, alerts 1 × email (refused) = 8 steps.
    await eventually(
      'every step to end',
      async () => {
        const { outcomes } = (await api('GET', '/v1/dashboard/overview?range=24h')).body.data;
        return outcomes.sent + outcomes.failed + outcomes.skipped === 8;
      },
      60_000,
    );
    // Two of ada's and bob's in-app messages read, one more seen.
    for (const subscriberId of ['ada', 'bob']) {
      const messages = (await api('GET', `/v1/messages?channel=in_app&subscriberId=${subscriberId}&limit=10`)).body.data;
      expect((await api('POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { messageId: [messages[0]._id], markAs: 'read' })).status).toBe(201);
    }
    const cy = (await api('GET', '/v1/messages?channel=in_app&subscriberId=cy&limit=10')).body.data;
    expect((await api('POST', '/v1/subscribers/cy/messages/mark-as', { messageId: [cy[0]._id], markAs: 'seen' })).status).toBe(201);

    const context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    pageErrors.push(...collectPageErrors(page));
    await createFirstAdministrator(page, herald.setupUrl(), ADMIN);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await herald?.close();
    await fake?.close();
  }, 60_000);

  it('is the landing page after sign-in and shows the numbers the API answers', async () => {
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/overview');
    // The dashboard's own session (cookie) answers what the API key does: the page's numbers come from it.
    const data = (await api('GET', '/v1/dashboard/overview?range=24h')).body.data;
    expect(data.outcomes).toEqual({ sent: 7, failed: 1, skipped: 0, delivered: 0, bounced: 0 });
    for (const key of ['sent', 'failed', 'skipped', 'delivered', 'bounced']) await hasText(page.getByTestId(`outcome-${key}`), number.format(data.outcomes[key]));
    expect(data.inApp).toMatchObject({ sent: 5, read: 2, seen: 3 });
    await hasText(page.getByTestId('read-rate'), percent(data.inApp.readRate));
    await hasText(page.getByTestId('seen-rate'), percent(data.inApp.seenRate));
    await hasText(page.getByTestId('latency-p50'), duration(data.latency.p50Ms));
    await hasText(page.getByTestId('latency-p95'), duration(data.latency.p95Ms));
    expect(data.latency.count).toBe(7);
    await hasText(page.getByTestId('provider-failures-email-webhook'), '1');
    expect(data.failuresByProvider).toEqual([{ providerId: 'email-webhook', channel: 'email', count: 1 }]);
    await hasText(page.getByTestId('workflow-failures-alerts'), '1');
    await hasText(page.getByTestId('top-sent-news'), String(data.topWorkflows.find((row: any) => row.identifier === 'news').sent));
    await hasText(page.getByTestId('top-sent-welcome'), '4');
    await hasText(page.getByTestId('top-sent-news'), '3');
    // The chart (a lazily loaded chunk) is drawn, and its numbers are in the table alternative.
    const canvas = page.locator('.chart-box canvas');
    await visible(canvas);
    expect(await canvas.getAttribute('aria-label')).toContain('In-app 5, Email 2');
    expect((await seriousViolations(page)).map((violation) => violation.id)).toEqual([]);
    await page.waitForTimeout(300);
    if (herald.mode === 'embedded') await screenshot(page, 'overview');
    else if (process.env.HERALD_UPDATE_SCREENSHOTS === '1') {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'overview-scaleout.png'), fullPage: true });
    }
    await page.getByText("Show the chart's numbers as a table").click();
    for (const channel of data.channels) {
      const total = data.series.reduce((sum: number, point: any) => sum + point.counts[channel], 0);
      await hasText(page.getByTestId(`channel-total-${channel}`), number.format(total));
    }
    expect((await seriousViolations(page)).map((violation) => violation.id)).toEqual([]);
  });

  it("a workflow's failures link to the Activity filtered to them", async () => {
    await page.getByRole('region', { name: 'Failures by workflow' }).getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
    const query = new URL(page.url()).searchParams;
    expect(query.get('status')).toBe('failed');
    expect(query.get('workflow')).toBeTruthy();
    const rows = page.locator('table.events tbody tr');
    await eventually('one failed event', async () => (await rows.count()) === 1);
    await visible(rows.first().getByText('Alerts'));
  });

  it('the ranges: 7 d per day, custom; the switch of range reloads the numbers', async () => {
    await page.goto(`${herald.url}/dashboard/overview`);
    await page.getByRole('button', { name: '7 d' }).click();
    await eventually('the 7 d range in the URL', async () => new URL(page.url()).searchParams.get('range') === '7d');
    await page.getByText("Show the chart's numbers as a table").click();
    await hasText(page.locator('.chart-table thead th').first(), 'Day');
    await hasText(page.getByTestId('outcome-sent'), '7');
    await page.getByRole('button', { name: 'Custom' }).click();
    const custom = page.getByRole('form', { name: 'Custom range' });
    await custom.getByLabel('From').fill('2020-01-01T00:00');
    await custom.getByLabel('To', { exact: true }).fill('2020-01-02T00:00');
    await page.getByRole('button', { name: 'Show range' }).click();
    await hasText(page.getByTestId('outcome-sent'), '0');
  });

  it('fits a 390 px phone', async () => {
    const context = await browser.newContext({ viewport: PHONE });
    const phone = await context.newPage();
    await signIn(phone, herald.url, ADMIN.email, ADMIN.password);
    await phone.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await hasText(phone.getByTestId('outcome-sent'), '7');
    await visible(phone.locator('.chart-box canvas'));
    await phone.waitForLoadState('networkidle');
    expect(await horizontalOverflow(phone)).toBeLessThanOrEqual(0);
    expect((await seriousViolations(phone)).map((violation) => violation.id)).toEqual([]);
    await screenshot(phone, 'overview-phone');
    await context.close();
  });

  it('left no page errors', () => {
    expect(pageErrors.filter((error) => !/status of (401|403|404)/.test(error))).toEqual([]);
  });
});
