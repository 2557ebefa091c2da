import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, collectPageErrors, launchBrowser } from '../helpers/browser.js';
import { createDashboardUser, TEST_PASSWORD } from '../helpers/dashboard.js';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createWorkflow } from '../worker/engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv, triggerAndSettle } from '../worker/delivery/delivery-helpers.js';
import { hasText, screenshot, seriousViolations, signIn, visible } from './dashboard-browser.js';

/**
 * The activity event timeline shows what providers reported: a SendGrid message gets a signed delivered and a
 * bounce report, and the dashboard (Chromium) shows both as provider reports with their raw event, and the message's
 * reported state.
 */
const run = browserAvailable();
const keys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

/**
 * Each test takes several browser steps, each allowed up to 10 s (the page's default timeout and the helpers'
 * waits): its budget covers them adding up on a loaded machine, so a slow run fails at the slow step with its message
 * rather than with "Test timed out" at vitest's 30 s.
 */
const TEST_MS = 60_000;

describe.skipIf(!run)('provider reports in the activity timeline (Chromium)', { timeout: TEST_MS }, () => {
  let server: TestServer;
  let fake: HttpFake;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let eventId: string;

  beforeAll(async () => {
    server = await startTestServer({ worker: true, env: deliveryEnv() });
    fake = await startHttpFake(() => ({ status: 202, headers: { 'x-message-id': 'sgTimeline1' }, body: '' }));
    await createSubscriber(server, { subscriberId: 'tim', email: 'tim@example.com' });
    await createWorkflow(server, { workflowId: 'receipt', steps: [{ name: 'Receipt email', type: 'email', controlValues: { subject: 'Your receipt', body: '<p>Thanks</p>' } }] });
    const integration = await createIntegration(server, {
      providerId: 'sendgrid',
      channel: 'email',
      credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: fake.url },
      configurations: { inboundWebhookEnabled: true, inboundWebhookSigningKey: keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') },
    });
    const delivery = await triggerAndSettle(server, { name: 'receipt', to: 'tim', payload: {} });
    eventId = delivery.event._id;
    const path = `/v1/webhooks/organizations/${integration._organizationId}/environments/${integration._environmentId}/email/${integration._id}`;
    const events = [
      { event: 'delivered', sg_event_id: randomUUID(), sg_message_id: 'sgTimeline1.filter0001', timestamp: 1763632800, response: '250 OK' },
      { event: 'bounce', type: 'bounce', sg_event_id: randomUUID(), sg_message_id: 'sgTimeline1.filter0001', timestamp: 1763632860, reason: '550 mailbox full' },
    ];
    const body = JSON.stringify(events);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = sign('sha256', Buffer.from(timestamp + body), keys.privateKey).toString('base64');
    const response = await server.request('POST', path, {
      key: null,
      rawBody: body,
      headers: { 'content-type': 'application/json', 'x-twilio-email-event-webhook-signature': signature, 'x-twilio-email-event-webhook-timestamp': timestamp },
    });
    expect(response.status, response.text).toBe(200);

    await createDashboardUser(server, { email: 'admin@example.com', role: 'admin' });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    errors = collectPageErrors(page);
    await signIn(page, server.url, 'admin@example.com', TEST_PASSWORD);
    // The sign-in page's own profile probe answers 401 before signing in: only what follows counts.
    errors.length = 0;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await fake?.close();
  });

  it('lists each report as a provider report with its state, text and raw event, and the message shows the reported state', async () => {
    await page.goto(`${server.url}/dashboard/activity/${eventId}`);
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    const step = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: /Receipt email/ }) });
    const reports = step.locator('tr.provider-report');
    await visible(reports.first());
    expect(await reports.count()).toBe(2);
    await hasText(reports.nth(0).getByRole('cell').nth(2), 'Delivered (SendGrid report: delivered): 250 OK');
    await hasText(reports.nth(0).getByRole('cell').nth(3), 'Provider report');
    await hasText(reports.nth(0).getByRole('cell').nth(1), 'Success');
    await hasText(reports.nth(1).getByRole('cell').nth(2), 'Bounced (SendGrid report: bounce/bounce): 550 mailbox full');
    await hasText(reports.nth(1).getByRole('cell').nth(1), 'Failed');
    await visible(reports.nth(1).getByText('550 mailbox full').last());
    const message = step.locator('section.message');
    await hasText(message.locator('.provider-status .badge'), 'bounced');
    expect(await message.locator('.provider-status').textContent()).toMatch(/^Provider reported: bounced delivered /);
    expect(await message.locator('.provider-status time').getAttribute('datetime')).toBe('2025-11-20T10:00:00.000Z');
    await hasText(message.locator('p.error'), 'Bounced (bounce/bounce): 550 mailbox full');
    await screenshot(page, 'activity-event-provider-reports');
    const violations = await seriousViolations(page);
    expect(violations, JSON.stringify(violations, null, 1)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
