import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, collectPageErrors, launchBrowser, watchSocketJoins } from '../helpers/browser.js';
import { scaleoutModeRequested } from '../helpers/databases.js';
import { SCALEOUT_SECRET, startScaleoutProcesses } from '../helpers/scaleout-processes.js';
import { startTestServer } from '../helpers/test-server.js';
import { serveInboxPage, type InboxPageServer } from './browser/inbox-page.js';
import { createSubscriber, heraldCaller, inAppMessages, type HeraldCall } from './inbox-socket-helpers.js';

/**
 * The real `<Inbox />` of @novu/react 3.19.2, bundled for the browser and served from another origin, in Debian's
 * Chromium against Herald. Embedded: one Herald process. HERALD_TEST_MODE=scaleout: `herald api` and `herald worker`
 * processes, the page connected to the API process and every trigger processed by the worker process.
 */
const scaleout = scaleoutModeRequested();
// docs/screenshots is refreshed on request only (HERALD_UPDATE_SCREENSHOTS=1), so a test run leaves the tree clean.
const SCREENSHOTS = process.env.HERALD_UPDATE_SCREENSHOTS === '1' ? join(dirname(fileURLToPath(import.meta.url)), '../../docs/screenshots') : join(tmpdir(), 'herald-inbox-screenshots');
const WORKFLOW = 'browser-news';
const SUBSCRIBER = 'browser-ada';

interface Herald {
  url: string;
  call: HeraldCall;
  close(): Promise<void>;
}

async function startHerald(): Promise<Herald> {
  if (scaleout) {
    const processes = await startScaleoutProcesses({ apis: 1, workers: 1 });
    return { url: processes.apis[0]!.url, call: heraldCaller(processes.apis[0]!.url, SCALEOUT_SECRET), close: () => processes.close() };
  }
  const server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
  return { url: server.url, call: heraldCaller(server.url, server.devKey), close: () => server.close() };
}

async function trigger(call: HeraldCall, title: string): Promise<string> {
  const response = await call('POST', '/v1/events/trigger', { name: WORKFLOW, to: SUBSCRIBER, payload: { title } });
  expect(response.status, response.text).toBe(201);
  return response.body.data.transactionId;
}

async function waitForMessages(call: HeraldCall, count: number): Promise<any[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const messages = await inAppMessages(call, SUBSCRIBER);
    if (messages.length >= count) return messages;
    if (Date.now() > deadline) throw new Error(`${messages.length} of ${count} messages after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const run = browserAvailable();

/**
 * Each test waits on Chromium, the API and (scaled out) the worker process in steps of up to 30 s (a first render, a
 * delivery) that add up to 80 s: its budget covers them, so a slow run fails at the step that was slow, with its
 * message, not with "Test timed out" part-way through (vitest's default is 30 s, as long as one step's own wait).
 */
const TEST_MS = 90_000;

describe.skipIf(!run)(`<Inbox /> in Chromium against Herald (${scaleout ? 'herald api + herald worker processes' : 'embedded'})`, { timeout: TEST_MS }, () => {
  let herald: Herald;
  let page: InboxPageServer;
  let browser: Browser;
  let tab: Page;
  let sockets: ReturnType<typeof watchSocketJoins>;
  let errors: string[];
  let failedRequests: string[];
  let token: string;

  beforeAll(async () => {
    herald = await startHerald();
    const workflow = await herald.call('POST', '/v2/workflows', {
      workflowId: WORKFLOW,
      name: 'Browser news',
      active: true,
      tags: ['news'],
      steps: [{ name: 'inbox', type: 'in_app', controlValues: { subject: '{{ payload.title }}', body: 'Posted for {{ subscriber.firstName }}: {{ payload.title }}' } }],
    });
    expect(workflow.status, workflow.text).toBe(201);
    await createSubscriber(herald.call, SUBSCRIBER, 'Ada');
    for (const title of ['Quarterly report', 'New comment on your post', 'Invoice paid']) await trigger(herald.call, title);
    await waitForMessages(herald.call, 3);

    const me = await herald.call('GET', '/v1/environments/me');
    expect(me.status, me.text).toBe(200);
    const applicationIdentifier = me.body.data.identifier;
    const session = await fetch(`${herald.url}/v1/inbox/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ applicationIdentifier, subscriber: { subscriberId: SUBSCRIBER } }),
    });
    expect(session.status).toBeLessThan(300);
    token = (await session.json()).data.token;

    page = await serveInboxPage({ applicationIdentifier, subscriberId: SUBSCRIBER, backendUrl: herald.url, socketUrl: herald.url });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    tab = await context.newPage();
    errors = collectPageErrors(tab);
    failedRequests = [];
    tab.on('response', (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    });
    sockets = watchSocketJoins(tab);
    await tab.goto(page.url);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await page?.close();
    await herald?.close();
  });

  async function bellCount(): Promise<number> {
    const response = await fetch(
      `${herald.url}/v1/inbox/notifications/count?filters=${encodeURIComponent(JSON.stringify([{ read: false, archived: false, snoozed: false }]))}`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(response.status).toBe(200);
    return (await response.json()).data[0].count;
  }

  it('shows the notifications, the bell dot, the tab badges and the unread count the count route gives', async () => {
    await tab.locator('.nv-notification').first().waitFor({ timeout: 30_000 });
    await expect.poll(() => tab.locator('.nv-notification').count(), { timeout: 15_000 }).toBe(3);
    for (const title of ['Quarterly report', 'New comment on your post', 'Invoice paid']) {
      await expect.poll(() => tab.getByText(`Posted for Ada: ${title}`).count()).toBe(1);
    }
    expect(await bellCount()).toBe(3);
    await tab.locator('.nv-bellDot').waitFor({ state: 'visible', timeout: 15_000 });
    const badges = tab.locator('.nv-notificationsTabsTriggerCount');
    await expect.poll(async () => (await badges.allInnerTexts()).map((text) => text.trim()), { timeout: 15_000 }).toEqual(['3', '3']);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await tab.screenshot({ path: join(SCREENSHOTS, scaleout ? 'inbox-scaleout.png' : 'inbox.png') });
  });

  it('a click on a notification marks it read, as the API then shows', async () => {
    const target = tab.locator('.nv-notification', { hasText: 'Invoice paid' });
    await target.click();
    await expect
      .poll(async () => (await inAppMessages(herald.call, SUBSCRIBER)).find((m) => m.content === 'Posted for Ada: Invoice paid')?.read, { timeout: 15_000 })
      .toBe(true);
    expect(await bellCount()).toBe(2);
    await expect.poll(async () => (await tab.locator('.nv-notificationsTabsTriggerCount').allInnerTexts()).map((text) => text.trim()), { timeout: 15_000 }).toEqual(['2', '2']);
  });

  it('a trigger made while the page is open appears without a reload', async () => {
    await expect.poll(() => sockets.joined(), { timeout: 20_000, message: "the Inbox's socket to join its room" }).toBe(true);
    await trigger(herald.call, 'Fresh from the worker');
    const fresh = tab.getByText('Posted for Ada: Fresh from the worker');
    const notice = tab.locator('.nv-notificationListNewNotificationsNotice__button');
    // The list shows it at once, or (a full list) behind its "new notifications" notice.
    await expect.poll(async () => (await fresh.count()) + (await notice.count()), { timeout: 30_000 }).toBeGreaterThan(0);
    if ((await fresh.count()) === 0) await notice.click();
    await fresh.waitFor({ timeout: 15_000 });
    await tab.screenshot({ path: join(SCREENSHOTS, scaleout ? 'inbox-live-scaleout.png' : 'inbox-live.png') });
    await expect.poll(async () => (await tab.locator('.nv-notificationsTabsTriggerCount').allInnerTexts()).map((text) => text.trim()), { timeout: 15_000 }).toEqual(['3', '3']);
    expect(await bellCount()).toBe(3);
  });

  it('the preferences panel lists the workflow', async () => {
    await tab.locator('.nv-preferences__button').click();
    await tab.locator('.nv-workflowContainer', { hasText: 'Browser news' }).waitFor({ timeout: 15_000 });
    await tab.screenshot({ path: join(SCREENSHOTS, scaleout ? 'inbox-preferences-scaleout.png' : 'inbox-preferences.png') });
  });

  it('ran without page errors or failed requests (the page has no favicon)', () => {
    const unexpected = failedRequests.filter((request) => !request.endsWith('/favicon.ico'));
    expect(unexpected).toEqual([]);
    // Console lines for those same failed requests carry no URL; anything else is a real error.
    const consoleErrors = errors.filter((error) => !/Failed to load resource/.test(error));
    expect(consoleErrors).toEqual([]);
  });
});
