import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { browserAvailable, collectPageErrors, launchBrowser } from '../helpers/browser.js';
import { startFrameworkBridge, type FrameworkBridge } from '../helpers/framework-bridge.js';
import { DESKTOP, createFirstAdministrator, screenshot, seriousViolations, visible } from './dashboard-browser.js';
import { callApi, startHeraldUnderTest, type HeraldUnderTest } from './herald-under-test.js';

/**
 * A code-first workflow in the dashboard (Debian's Chromium against `herald start`, or API and worker processes in
 * scale-out): synced from a real @novu/framework bridge, it is shown read-only, and its step's control form, built
 * from the control schema in the code, saves values that the next message uses and previews through the bridge.
 */
const run = browserAvailable() ? describe : describe.skip;
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery', name: 'Ada Admin' };

run('code-first workflows in the dashboard', () => {
  let herald: HeraldUnderTest;
  let bridge: FrameworkBridge;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  const api = (method: string, path: string, body?: unknown) => callApi(herald, method, path, body);

  beforeAll(async () => {
    herald = await startHeraldUnderTest({ HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_RATE_LIMIT: 'false' });
    bridge = await startFrameworkBridge({ secretKey: herald.secretKey });
    browser = await launchBrowser();
    expect((await api('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true })).status).toBe(201);
    const synced = await api('POST', '/v1/bridge/sync?source=cli', { bridgeUrl: bridge.url });
    expect(synced.status, synced.text).toBe(201);
    const context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    pageErrors.push(...collectPageErrors(page));
    await createFirstAdministrator(page, herald.setupUrl(), ADMIN);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await bridge?.stop();
    await herald?.close();
  }, 60_000);

  it('shows a synced workflow read-only; its control form saves values and previews through the bridge', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows', exact: true }).click();
    await page.getByRole('link', { name: 'Welcome' }).click();
    await page.getByRole('heading', { level: 1, name: 'Workflow: Welcome' }).waitFor();
    await visible(page.getByText('Defined in code (origin external)'));
    // Read-only: no step editing, no workflow save, no step types to add.
    expect(await page.getByRole('button', { name: 'Save workflow' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add step' }).count()).toBe(0);
    expect(await page.getByLabel('Step name').count()).toBe(0);

    // The form comes from the step's control schema: the greeting field with the code's default.
    const controls = page.getByRole('form', { name: 'Controls of hello' });
    const greeting = controls.getByLabel('Greeting');
    expect(await greeting.inputValue()).toBe('Hello');
    await greeting.fill('Welcome back');
    await controls.getByRole('button', { name: /Save controls/ }).click();
    await page.getByRole('status').getByText(/Control values saved/).first().waitFor();
    expect((await api('GET', '/v1/bridge/controls/welcome/hello')).body.data.values).toEqual({ greeting: 'Welcome back' });

    // Preview: the bridge computes the step with the form's values and the sample payload.
    const preview = page.getByRole('region', { name: 'Preview of hello' });
    await preview.getByLabel('Sample payload (JSON)').fill('{"name":"Zoe","plan":"pro"}');
    await preview.getByRole('button', { name: /Preview/ }).click();
    await visible(preview.getByText('Welcome back, Zoe!'));
    await visible(preview.getByText('You are on the pro plan.'));
    expect((await bridge.calls()).some((call) => call.action === 'preview' && call.workflowId === 'welcome' && call.signed)).toBe(true);
    await screenshot(page, 'code-first-workflow');
    const violations = await seriousViolations(page);
    expect(violations, JSON.stringify(violations, null, 1)).toEqual([]);

    // The saved values are what the next message uses.
    const triggered = await api('POST', '/v1/events/trigger', { name: 'welcome', to: { subscriberId: 'zoe', email: 'zoe@example.com' }, payload: { name: 'Zoe', plan: 'free', noEmail: true } });
    expect(triggered.status, triggered.text).toBe(201);
    const deadline = Date.now() + 20_000;
    let subject: string | undefined;
    while (!subject && Date.now() < deadline) {
      const messages = await api('GET', `/v1/messages?transactionId=${triggered.body.data.transactionId}`);
      subject = messages.body.data.find((message: any) => message.channel === 'in_app')?.subject;
      if (!subject) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(subject).toBe('Welcome back, Zoe!');
    expect(pageErrors).toEqual([]);
    // A dozen browser steps of up to 15 s each (the page's default timeout) and a 20 s wait for the message.
  }, 90_000);
});
