import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { browserAvailable, collectPageErrors, launchBrowser, watchSocketJoins } from '../helpers/browser.js';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { DESKTOP, PHONE, eventually, hasCount, hasText, horizontalOverflow, screenshot, seriousViolations, signIn, visible } from './dashboard-browser.js';
import { startHeraldUnderTest, type HeraldUnderTest } from './herald-under-test.js';

/**
 * The dashboard end to end in Debian's Chromium against a real Herald (embedded: `herald start`; scale-out:
 * two `herald api` processes and a `herald worker`). The flows build on each other in order: the admin made by
 * the setup link configures what the later flows use. Email goes to a local fake of the `email-webhook`
 * provider, which can be told to fail.
 */
const run = browserAvailable() ? describe : describe.skip;
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery', name: 'Ada Admin' };
const VIEWER = { email: 'viewer@example.com', password: 'viewer password 1', name: 'Vic Viewer' };

/**
 * Each flow chains a dozen browser steps, each allowed 10 s (newPage's default timeout), and deliveries through the
 * worker allowed 15-30 s (fakeReceived, the Activity list's polling): its budget covers the waits that can add up under
 * a loaded machine, so a slow run fails at the step that was slow, with its message, not with "Test timed out" at
 * vitest's default 30 s. The flows that wait longer say so.
 */
const FLOW_MS = 90_000;

run('dashboard flows in the browser', { timeout: FLOW_MS }, () => {
  let herald: HeraldUnderTest;
  let fake: HttpFake;
  let browser: Browser;
  let admin: BrowserContext;
  let adminPage: Page;
  const pageErrors: string[] = [];
  let workflowDbId = '';
  /** The event of the activity flow, delivered: the status filter must leave it out. */
  let completedTransactionId = '';

  /** The public API, as a server-side client uses it. */
  async function api(method: string, path: string, body?: unknown, url = herald.url) {
    const response = await fetch(url + path, {
      method,
      headers: { authorization: `ApiKey ${herald.secretKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  async function newPage(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    pageErrors.push(...collectPageErrors(page));
    return page;
  }

  /** A section of the main navigation (other links on a page may have the same name). */
  async function nav(page: Page, section: string) {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: section, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: section }).waitFor();
  }

  async function expectAccessible(page: Page, name: string) {
    const violations = await seriousViolations(page);
    expect(violations, `${name}: ${JSON.stringify(violations, null, 1)}`).toEqual([]);
  }

  /** Waits for a fake request whose JSON body satisfies `test`. */
  async function fakeReceived(test: (body: any) => boolean, timeoutMs = 20_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = fake.requests.map((request) => JSON.parse(request.body || '{}')).find(test);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`the provider fake did not receive the expected request; got ${fake.requests.length}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  beforeAll(async () => {
    fake = await startHttpFake(() => ({ status: 200, body: { id: 'fake-message-id' } }));
    herald = await startHeraldUnderTest({ HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_JOB_ATTEMPTS: '1', HERALD_RATE_LIMIT: 'false' });
    browser = await launchBrowser();
    // The public API's records the flows need: an in-app integration, a subscriber with an email address.
    expect((await api('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', active: true })).status).toBe(201);
    expect((await api('POST', '/v2/subscribers', { subscriberId: 'ada', email: 'ada@example.com', firstName: 'Ada' })).status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await herald?.close();
    await fake?.close();
  }, 60_000);

  it('the setup link printed by the first start creates the first admin', async () => {
    admin = await browser.newContext({ viewport: DESKTOP });
    adminPage = await newPage(admin);
    // Before setup the login page says how to get the first account.
    await adminPage.goto(`${herald.url}/dashboard/`);
    await adminPage.getByText('No administrator exists yet').waitFor();
    await screenshot(adminPage, 'login-first-start');
    await expectAccessible(adminPage, 'login');

    await adminPage.goto(herald.setupUrl());
    await adminPage.getByRole('heading', { name: 'Create the first administrator' }).waitFor();
    await adminPage.getByLabel('Name').fill(ADMIN.name);
    await adminPage.locator('input[type=email]').fill(ADMIN.email);
    await adminPage.locator('input[type=password]').fill(ADMIN.password);
    await screenshot(adminPage, 'setup');
    await expectAccessible(adminPage, 'setup');
    await adminPage.getByRole('button', { name: 'Create administrator' }).click();
    await adminPage.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    expect(await adminPage.locator('.who').textContent()).toContain(ADMIN.name);

    // The link is single-use.
    const again = await fetch(`${herald.url}/v1/dashboard/setup`);
    expect((await again.json()).data.required).toBe(false);
  });

  it('signs in through the login page with the keyboard; a wrong password is refused', async () => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await newPage(context);
    await page.goto(`${herald.url}/dashboard/`);
    await page.locator('input[type=email]').fill(ADMIN.email);
    await page.locator('input[type=password]').fill('wrong password');
    await page.locator('button[type=submit]').click();
    await page.getByRole('alert').getByText('Wrong email or password.').waitFor();
    await screenshot(page, 'login');

    // Keyboard only: Tab to each field, Enter submits.
    await page.goto(`${herald.url}/dashboard/`);
    await page.locator('input[type=email]').waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type)).toBe('email');
    await page.keyboard.type(ADMIN.email);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type)).toBe('password');
    await page.keyboard.type(ADMIN.password);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor({ timeout: 20_000 });
    // and the main navigation is reachable by Tab and Enter.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workflows', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Workflows', level: 1 }).waitFor();
    await context.close();
  });

  it('an email integration created through its form delivers', async () => {
    const page = adminPage;
    await nav(page, 'Integrations');
    await page.getByRole('button', { name: 'Add integration' }).click();
    await page.getByLabel('Channel').selectOption('email');
    await page.getByLabel('Provider').selectOption('email-webhook');
    await page.getByLabel('Name', { exact: true }).fill('Fake mail');
    await page.getByLabel(/webhookUrl/i).fill(`${fake.url}/mail`);
    await page.getByLabel(/secretKey/i).fill('fake-signing-secret');
    // An optional field the provider reads: added by name.
    await page.getByLabel('Add another credential field').fill('from');
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.getByLabel('from', { exact: true }).fill('herald@example.com');
    // Secrets are masked until revealed.
    expect(await page.getByLabel(/secretKey/i).getAttribute('type')).toBe('password');
    await page.getByRole('button', { name: 'Create integration' }).click();
    await page.getByRole('cell', { name: 'Fake mail', exact: true }).waitFor();
    await screenshot(page, 'integrations');
    await expectAccessible(page, 'integrations');

    const workflow = await api('POST', '/v2/workflows', {
      workflowId: 'welcome',
      name: 'Welcome',
      steps: [
        { name: 'Inbox note', type: 'in_app', controlValues: { subject: 'Welcome', body: 'Hello {{subscriber.firstName}}' } },
        { name: 'Welcome email', type: 'email', controlValues: { subject: 'Welcome aboard', body: '<h1>Hi {{subscriber.firstName}}</h1><p>Glad you are here.</p>' } },
      ],
    });
    expect(workflow.status).toBe(201);
    workflowDbId = workflow.body.data._id;
    const trigger = await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { plan: 'pro' } });
    expect(trigger.status).toBe(201);
    const delivered = await fakeReceived((body) => body.subject === 'Welcome aboard');
    expect(delivered.to).toContain('ada@example.com');
    expect(delivered.html).toContain('Hi Ada');
  });

  it('an event triggered through the API shows in the activity list and its timeline shows every step', async () => {
    const page = adminPage;
    const trigger = await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { plan: 'team' } });
    const { transactionId } = trigger.body.data;
    completedTransactionId = transactionId;
    await nav(page, 'Activity');
    // No reload: the list polls and the new event appears.
    const row = page.getByRole('row').filter({ hasText: transactionId });
    await row.waitFor({ timeout: 15_000 });
    await visible(row.getByText('Email: completed'), 15_000);
    await screenshot(page, 'activity');
    await expectAccessible(page, 'activity');

    await row.getByRole('link').click();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    const inbox = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: /Inbox note/ }) });
    const email = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: /Welcome email/ }) });
    await hasText(inbox.locator('.job-head .badge'), 'completed');
    await hasText(email.locator('.job-head .badge'), 'completed', 15_000);
    // Execution details with status, detail, source and time; the provider's raw answer; the message.
    await visible(inbox.getByRole('cell', { name: 'Step created' }));
    await visible(email.getByRole('cell', { name: 'Success' }).first());
    await visible(email.getByRole('cell', { name: 'Internal' }).first());
    await visible(email.getByText('fake-message-id').first());
    await visible(inbox.getByText('Hello Ada'));
    const frame = email.frameLocator('iframe.email-frame');
    await visible(frame.getByRole('heading', { name: 'Hi Ada' }), 10_000);
    expect(await email.locator('iframe.email-frame').first().getAttribute('sandbox')).toBe('');
    await screenshot(page, 'activity-event');
    await expectAccessible(page, 'activity event');
  });

  it('a step that failed against the provider is retried from the dashboard and then succeeds', async () => {
    const page = adminPage;
    fake.setHandler(() => ({ status: 500, body: { error: 'provider is down' } }));
    const trigger = await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { plan: 'retry' } });
    const { transactionId } = trigger.body.data;
    await nav(page, 'Activity');
    const row = page.getByRole('row').filter({ hasText: transactionId });
    await visible(row.getByText('Email: failed'), 20_000);
    // The status filter is the server's: with `failed` the list holds this event and not the delivered one, both of
    // which the unfiltered first page shows (so seeing one without the other means the filtered answer is shown).
    const completedRow = page.getByRole('row').filter({ hasText: completedTransactionId });
    await visible(completedRow);
    const filters = page.getByRole('form', { name: 'Filter events' });
    await filters.getByLabel('Status', { exact: true }).selectOption('failed');
    const filtered = page.waitForResponse((response) => /\/v1\/notifications\?.*status=failed/.test(response.url()) && response.status() === 200);
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await filtered;
    await eventually('only the failed event listed', async () => (await row.count()) === 1 && (await completedRow.count()) === 0, 10_000);
    expect(new URL(page.url()).searchParams.get('status')).toBe('failed');
    await row.getByRole('link').click();
    const email = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: /Welcome email/ }) });
    await hasText(email.locator('.job-head .badge'), 'failed');
    await visible(email.getByText('provider is down').first());
    await screenshot(page, 'activity-event-failed');

    const before = fake.requests.length;
    fake.setHandler(() => ({ status: 200, body: { id: 'fake-after-retry' } }));
    await email.getByRole('button', { name: 'Retry step' }).click();
    await hasText(email.locator('.job-head .badge'), 'completed', 20_000);
    await visible(email.getByRole('cell').filter({ hasText: 'retry' }).first());
    expect(fake.requests.length).toBe(before + 1);
    await visible(email.getByText('fake-after-retry').first());
  });

  it("a workflow step edited in the dashboard is used by the next trigger", async () => {
    const page = adminPage;
    await nav(page, 'Workflows');
    await page.getByRole('link', { name: 'Welcome' }).click();
    const step = page.getByRole('group', { name: /Step 2: Welcome email/ });
    await step.getByLabel('Subject').fill('Edited in the dashboard for {{payload.plan}}');
    // The live preview renders the unsaved controls with a sample payload, through the server's Liquid code.
    const preview = page.getByRole('region', { name: 'Preview of Welcome email' });
    await preview.getByLabel('Sample payload (JSON)').fill('{"plan":"gold"}');
    await visible(preview.getByText('Edited in the dashboard for gold'));
    await visible(preview.frameLocator('iframe').getByRole('heading', { name: 'Hi Ada' }));
    await page.getByRole('button', { name: 'Save workflow' }).click();
    await page.getByRole('status').getByText(/Saved at/).waitFor();
    await expectAccessible(page, 'workflow editor');

    await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { plan: 'edited' } });
    const delivered = await fakeReceived((body) => typeof body.subject === 'string' && body.subject.startsWith('Edited'));
    expect(delivered.subject).toBe('Edited in the dashboard for edited');
    expect((await api('GET', `/v2/workflows/${workflowDbId}`)).body.data.steps[1].controlValues.subject).toBe('Edited in the dashboard for {{payload.plan}}');

    await nav(page, 'Workflows');
    await page.getByRole('link', { name: 'Welcome' }).waitFor();
    await screenshot(page, 'workflows');
    await expectAccessible(page, 'workflows');
  });

  it('a filter added in the step filter form runs the step only for matching triggers, and is removed again', async () => {
    const page = adminPage;
    await nav(page, 'Workflows');
    await page.getByRole('link', { name: 'Welcome' }).click();
    const step = page.getByRole('group', { name: /Step 2: Welcome email/ });
    const filters = step.getByRole('group', { name: 'Filters', exact: true });
    await visible(filters.getByText('No filters: the step runs for every event.'));
    // Keyboard: the add button is reached and pressed without the mouse; the new group has one empty condition.
    await filters.getByRole('button', { name: 'Add filter group to Welcome email' }).focus();
    await page.keyboard.press('Enter');
    const group = filters.getByRole('group', { name: 'Filter group 1' });
    const row = group.getByRole('listitem', { name: 'Condition 1 of group 1' });
    await row.getByLabel('Field', { exact: true }).focus();
    await page.keyboard.type('plan');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('SELECT');
    expect(await row.getByLabel('On', { exact: true }).inputValue()).toBe('payload');
    expect(await row.getByLabel('Operator', { exact: true }).inputValue()).toBe('EQUAL');
    await row.getByLabel('Value', { exact: true }).fill('pro');
    // A second condition, added then removed, leaves the group as it was.
    await group.getByRole('button', { name: 'Add condition to group 1' }).click();
    await group.getByRole('button', { name: 'Remove condition 2 of group 1' }).click();
    await hasCount(group.getByRole('listitem'), 1);
    await page.getByRole('button', { name: 'Save workflow' }).click();
    await page.getByRole('status').getByText(/Saved at/).waitFor();
    await screenshot(page, 'workflow-editor');
    await expectAccessible(page, 'workflow editor with a filter');
    // At 390 px the condition's fields stack: nothing scrolls sideways. (The page check below runs without a filter.)
    await page.setViewportSize(PHONE);
    expect(await horizontalOverflow(page), 'workflow editor with a filter scrolls sideways at 390px').toBeLessThanOrEqual(0);
    await expectAccessible(page, 'workflow editor with a filter at 390px');
    await screenshot(page, 'workflow-editor-phone');
    await page.setViewportSize(DESKTOP);
    const stored = async () => (await api('GET', `/v2/workflows/${workflowDbId}`)).body.data.steps[1].filters;
    expect(await stored()).toEqual([{ isNegated: false, type: 'GROUP', value: 'AND', children: [{ field: 'plan', value: 'pro', operator: 'EQUAL', on: 'payload' }] }]);

    // Two triggers: only the `pro` one sends the email; the other's email job is skipped by the filter.
    const pro = (await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { plan: 'pro' } })).body.data.transactionId;
    const free = (await api('POST', '/v1/events/trigger', { name: 'welcome', to: 'ada', payload: { plan: 'free' } })).body.data.transactionId;
    const emailJob = async (transactionId: string) => {
      const events = (await api('GET', `/v1/notifications?transactionId=${transactionId}`)).body.data;
      return events[0]?.jobs?.find((job: any) => job.type === 'email');
    };
    const settled = (job: any) => ['completed', 'skipped', 'failed'].includes(job?.status);
    await eventually('both email jobs to finish', async () => settled(await emailJob(pro)) && settled(await emailJob(free)), 20_000);
    expect((await emailJob(pro)).status).toBe('completed');
    const skipped = await emailJob(free);
    expect(skipped.status).toBe('skipped');
    expect(skipped.executionDetails.map((detail: any) => detail.detail).join('\n')).toContain('Step skipped: filters did not match');
    const emails = async (transactionId: string) => (await api('GET', `/v1/messages?transactionId=${transactionId}&channel=email`)).body.data;
    expect((await emails(pro)).length).toBe(1);
    expect(await emails(free)).toEqual([]);

    // The filter is removed through the form again: the later flows expect every welcome email.
    await group.getByRole('button', { name: 'Remove group 1' }).click();
    await visible(filters.getByText('No filters: the step runs for every event.'));
    await page.getByRole('button', { name: 'Save workflow' }).click();
    await page.getByRole('status').getByText(/Saved at/).waitFor();
    expect(await stored()).toEqual([]);

    // Filters the form cannot express (a negated group) keep the JSON editor, with a note saying why.
    const negated = [{ isNegated: true, type: 'GROUP', value: 'AND', children: [{ field: 'plan', value: 'free', operator: 'EQUAL', on: 'payload' }] }];
    const other = await api('POST', '/v2/workflows', { workflowId: 'json-filters', name: 'JSON filters', steps: [{ name: 'Note', type: 'in_app', controlValues: { body: 'x' }, filters: negated }] });
    expect(other.status).toBe(201);
    await page.goto(`${herald.url}/dashboard/workflows/${other.body.data._id}`);
    const jsonStep = page.getByRole('group', { name: /Step 1: Note/ });
    await visible(jsonStep.getByText('The filter form cannot show these filters (group 1 is negated): edit them as JSON.'));
    expect(JSON.parse(await jsonStep.getByLabel('Filters (JSON array)').inputValue())).toEqual(negated);
    await hasCount(jsonStep.getByRole('group', { name: 'Filters', exact: true }), 0);
    await expectAccessible(page, 'workflow editor with JSON filters');
    expect((await api('DELETE', `/v2/workflows/${other.body.data._id}`)).status).toBeLessThan(300);
  });

  it("on a subscriber's page the admin changes preferences and the live Inbox preview shows new notifications without a reload", async () => {
    const page = adminPage;
    // HMAC on for the in-app integration: the preview only opens with the hash the server computes.
    const inApp = (await api('GET', '/v1/integrations')).body.data.find((integration: any) => integration.channel === 'in_app');
    expect((await api('PUT', `/v1/integrations/${inApp._id}`, { credentials: { hmac: true }, check: false })).status).toBe(200);
    const news = await api('POST', '/v2/workflows', {
      workflowId: 'preview-news',
      name: 'Preview news',
      steps: [{ name: 'Inbox news', type: 'in_app', controlValues: { subject: 'News', body: 'News for {{subscriber.firstName}}: {{payload.title}}' } }],
    });
    expect(news.status).toBe(201);
    expect((await api('POST', '/v1/events/trigger', { name: 'preview-news', to: 'ada', payload: { title: 'before the page opened' } })).status).toBe(201);

    const sockets = watchSocketJoins(page);

    await nav(page, 'Subscribers');
    await page.getByRole('link', { name: 'ada', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Subscriber ada' }).waitFor();

    // Preferences: one workflow's channel off, then the global SMS switch off; each read back through the API.
    const prefs = page.getByRole('region', { name: 'Preferences' });
    const welcomeEmail = prefs.getByRole('checkbox', { name: 'Email for Welcome' });
    await eventually('Email for Welcome to be checked and enabled', async () => (await welcomeEmail.isChecked()) && (await welcomeEmail.isEnabled()));
    await welcomeEmail.uncheck();
    await hasText(prefs.getByRole('status'), 'Saved: Email off for Welcome.');
    const stored = async () => (await api('GET', '/v2/subscribers/ada/preferences?criticality=all')).body.data;
    const welcome = (data: any) => data.workflows.find((entry: any) => entry.workflow.identifier === 'welcome');
    expect(welcome(await stored()).channels).toMatchObject({ email: false, in_app: true });
    expect(await welcomeEmail.isChecked()).toBe(false);
    const globalSms = prefs.getByRole('checkbox', { name: 'SMS for All workflows (global)' });
    await eventually('SMS (global) to be enabled again', () => globalSms.isEnabled());
    await globalSms.uncheck();
    await hasText(prefs.getByRole('status'), 'Saved: SMS off for all workflows.');
    expect((await stored()).global.channels).toMatchObject({ sms: false, email: true, in_app: true });
    // Back on: the later flows expect the welcome email.
    await eventually('Email for Welcome to be enabled again', () => welcomeEmail.isEnabled());
    await welcomeEmail.check();
    await hasText(prefs.getByRole('status'), 'Saved: Email on for Welcome.');
    expect(welcome(await stored()).channels.email).toBe(true);

    // The preview's settings: the environment's identifier and the subscriber hash, computed on the server.
    const settings = (await (await page.request.get(`${herald.url}/v1/dashboard/subscribers/ada/inbox-preview`)).json()).data;
    expect(settings).toEqual({
      applicationIdentifier: (await api('GET', '/v1/environments/me')).body.data.identifier,
      subscriberId: 'ada',
      subscriberHash: createHmac('sha256', herald.secretKey).update('ada').digest('hex'),
    });

    // The live Inbox shows ada's in-app notification, then one triggered while the page is open, without a reload.
    const preview = page.locator('.inbox-preview');
    await visible(preview.getByText('News for Ada: before the page opened'), 30_000);
    // The second trigger waits for the Inbox's socket to be in its room (watchSocketJoins says why).
    await eventually("the Inbox preview's socket to join its room", async () => sockets.joined(), 20_000);
    sockets.stop();
    await api('POST', '/v1/events/trigger', { name: 'preview-news', to: 'ada', payload: { title: 'while the page is open' } });
    const fresh = preview.getByText('News for Ada: while the page is open');
    const notice = preview.locator('.nv-notificationListNewNotificationsNotice__button');
    await eventually('the new notification or its notice in the preview', async () => (await fresh.count()) + (await notice.count()) > 0, 30_000);
    if ((await fresh.count()) === 0) await notice.click();
    await visible(fresh);
    await expectAccessible(page, 'subscriber with the Inbox preview');

    // Settings shows the application identifier of the environment shown.
    await nav(page, 'Settings');
    const identifier = await page.getByLabel('Application identifier (development)').inputValue();
    expect(identifier).toBe((await api('GET', '/v1/environments/me')).body.data.identifier);
    const production = (await api('GET', '/v1/environments')).body.data.find((environment: any) => environment.name === 'production');
    await page.getByRole('button', { name: 'Switch to production' }).click();
    expect(await page.getByLabel('Application identifier (production)').inputValue()).toBe(production.identifier);
    expect(production.identifier).not.toBe(identifier);
    await page.getByRole('button', { name: 'Switch to development' }).click();
    await page.getByLabel('Application identifier (development)').waitFor();
  }, 90_000);

  it('a revoked secret key gets 401 at once, on every API process', async () => {
    const page = adminPage;
    await nav(page, 'Settings');
    await page.getByRole('button', { name: 'Create secret key' }).click();
    const created = await page.getByLabel(/New secret key/).inputValue();
    expect(created.length).toBeGreaterThan(20);
    const call = (url: string) => fetch(`${url}/v1/integrations`, { headers: { authorization: `ApiKey ${created}` } }).then((response) => response.status);
    expect(await call(herald.url)).toBe(200);
    expect(await call(herald.otherUrl)).toBe(200);
    await screenshot(page, 'settings');
    await expectAccessible(page, 'settings');

    page.once('dialog', (dialog) => void dialog.accept());
    // Newest first; the list shows only a mask and the last four characters.
    const keyRow = page.getByRole('table', { name: 'Secret keys' }).getByRole('row').filter({ hasText: created.slice(-4) });
    await keyRow.getByRole('button', { name: /Revoke/ }).click();
    await visible(keyRow.getByText(/^revoked/));
    expect(await page.getByRole('table', { name: 'Secret keys' }).textContent()).not.toContain(created);
    expect(await call(herald.url)).toBe(401);
    expect(await call(herald.otherUrl)).toBe(401);
  });

  it('an invited viewer signs in, sees activity, never sees credentials and cannot change anything', async () => {
    const page = adminPage;
    await nav(page, 'Settings');
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Create invite link' }).click();
    const inviteUrl = await page.getByLabel(/Invite link/).inputValue();
    expect(inviteUrl).toContain('/dashboard/invite?token=');

    const viewer = await browser.newContext({ viewport: DESKTOP });
    const viewerPage = await newPage(viewer);
    await viewerPage.goto(inviteUrl.replace(/^https?:\/\/[^/]+/, herald.url));
    await viewerPage.getByLabel('Name').fill(VIEWER.name);
    await viewerPage.locator('input[type=email]').fill(VIEWER.email);
    await viewerPage.locator('input[type=password]').fill(VIEWER.password);
    await screenshot(viewerPage, 'invite');
    await expectAccessible(viewerPage, 'invite');
    await viewerPage.getByRole('button', { name: 'Create account' }).click();
    await viewerPage.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    expect(await viewerPage.locator('.who').textContent()).toContain('viewer');
    await visible(viewerPage.getByRole('row').filter({ hasText: 'Welcome' }).first(), 15_000);

    // Integrations: listed, but no credentials and no buttons that change anything.
    await nav(viewerPage, 'Integrations');
    await viewerPage.getByRole('cell', { name: 'Fake mail', exact: true }).waitFor();
    await hasCount(viewerPage.getByRole('button', { name: /Edit|Delete|Add integration/ }), 0);
    await hasCount(viewerPage.getByText('fake-signing-secret'), 0);
    await screenshot(viewerPage, 'integrations-viewer');

    // The API refuses too, with the viewer's own session and CSRF token.
    const me = await viewerPage.request.get(`${herald.url}/v1/dashboard/me`);
    const { csrfToken } = (await me.json()).data;
    const listed = await viewerPage.request.get(`${herald.url}/v1/integrations`);
    expect(listed.status()).toBe(200);
    const integrations = (await listed.json()).data as Array<Record<string, unknown>>;
    expect(integrations.length).toBeGreaterThan(0);
    for (const integration of integrations) expect(integration.credentials).toBeUndefined();
    expect(JSON.stringify(integrations)).not.toContain('fake-signing-secret');
    const headers = { 'x-csrf-token': csrfToken, 'content-type': 'application/json' };
    const writes = [
      await viewerPage.request.post(`${herald.url}/v1/events/trigger`, { headers, data: { name: 'welcome', to: 'ada', payload: {} } }),
      await viewerPage.request.patch(`${herald.url}/v2/workflows/${workflowDbId}`, { headers, data: { active: false } }),
      await viewerPage.request.post(`${herald.url}/v1/dashboard/api-keys`, { headers, data: {} }),
      await viewerPage.request.delete(`${herald.url}/v1/integrations/${integrations[0]._id}`, { headers }),
    ];
    expect(writes.map((response) => response.status())).toEqual([403, 403, 403, 403]);
    expect((await api('GET', `/v2/workflows/${workflowDbId}`)).body.data.active).toBe(true);

    // A subscriber's preferences are read-only for a viewer, and the live Inbox preview (it acts as the subscriber) is for admins.
    await viewerPage.goto(`${herald.url}/dashboard/subscribers/ada`);
    const viewerPrefs = viewerPage.getByRole('region', { name: 'Preferences' });
    await visible(viewerPrefs.getByRole('checkbox', { name: 'Email for Welcome' }));
    expect(await viewerPrefs.getByRole('checkbox', { name: 'Email for Welcome' }).isDisabled()).toBe(true);
    await visible(viewerPage.getByText('The live Inbox preview is for administrators'));
    await hasCount(viewerPage.locator('.inbox-preview'), 0);
    expect((await viewerPage.request.get(`${herald.url}/v1/dashboard/subscribers/ada/inbox-preview`)).status()).toBe(403);
    const viewerPatch = await viewerPage.request.patch(`${herald.url}/v2/subscribers/ada/preferences`, { headers, data: { channels: { email: false } } });
    expect(viewerPatch.status()).toBe(403);

    // The workflow editor is read-only for a viewer.
    await nav(viewerPage, 'Workflows');
    await viewerPage.getByRole('link', { name: 'Welcome' }).click();
    await viewerPage.getByText('You have read-only access').waitFor();
    await hasCount(viewerPage.getByRole('button', { name: 'Save workflow' }), 0);
    await hasCount(viewerPage.getByRole('button', { name: /Add filter group|Add condition/ }), 0);
    expect(await viewerPage.getByRole('group', { name: /Step 2: Welcome email/ }).getByRole('group', { name: 'Filters', exact: true }).isVisible()).toBe(true);
    await viewer.close();
  });

  it('every page is readable at 1280 and 390 px wide with no serious axe-core violations', async () => {
    const events = await api('GET', '/v1/notifications?limit=1');
    await api('POST', '/v2/topics', { key: 'product-news', name: 'Product news' });
    await api('POST', '/v2/topics/product-news/subscriptions', { subscriberIds: ['ada'] });
    const pages: Array<[string, string]> = [
      ['activity', '/activity'],
      ['activity-event', `/activity/${events.body.data[0]._id}`],
      ['workflows', '/workflows'],
      ['workflow-editor', `/workflows/${workflowDbId}`],
      ['workflow-new', '/workflows/new'],
      ['integrations', '/integrations'],
      ['subscribers', '/subscribers'],
      ['subscriber', '/subscribers/ada'],
      ['topics', '/topics'],
      ['topic', '/topics/product-news'],
      ['settings', '/settings'],
    ];
    for (const viewport of [DESKTOP, PHONE]) {
      const context = await browser.newContext({ viewport });
      const page = await newPage(context);
      await signIn(page, herald.url, ADMIN.email, ADMIN.password);
      for (const [name, path] of pages) {
        await page.goto(`${herald.url}/dashboard${path}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        // The subscriber's page is checked with its live Inbox preview rendered (a lazily loaded chunk).
        if (name === 'subscriber') await visible(page.locator('.inbox-preview .nv-notification'), 30_000);
        await expectAccessible(page, `${name} at ${viewport.width}px`);
        expect(await horizontalOverflow(page), `${name} at ${viewport.width}px scrolls sideways`).toBeLessThanOrEqual(0);
        // The editor's phone screenshot is taken with a filter in the filter flow.
        if (viewport === PHONE) { if (name !== 'workflow-editor') await screenshot(page, `${name}-phone`); }
        else if (['workflow-new', 'subscribers', 'subscriber', 'topics', 'topic'].includes(name)) await screenshot(page, name);
      }
      // Keyboard: the first Tab reaches the skip link, which moves focus to the page.
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      await context.close();
    }
  }, 240_000);

  it('logout ends the session', async () => {
    const page = adminPage;
    const before = await page.request.get(`${herald.url}/v1/dashboard/me`);
    expect(before.status()).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('input[type=password]').waitFor();
    const after = await page.request.get(`${herald.url}/v1/dashboard/me`);
    expect(after.status()).toBe(401);
    await page.goto(`${herald.url}/dashboard/settings`);
    await page.locator('input[type=email]').waitFor();
    expect(pageErrors.filter((error) => !/status of (401|403|404)/.test(error))).toEqual([]);
  });
});
