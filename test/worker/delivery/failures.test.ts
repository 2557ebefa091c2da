import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFake, unusedPort, type FakeHandler, type HttpFake } from '../../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow } from '../engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv, outcomeDetails, triggerAndSettle } from './delivery-helpers.js';

/** Provider and http_request failures: retried with backoff when retryable, failed at once when not; the records they leave. */
const ATTEMPTS = 3;
// Long enough that a loaded CI machine's fake still answers inside it: at 300 ms a slow 202 timed out and left a
// third attempt (and detail) where the test expects two.
const TIMEOUT_MS = 1_500;
const SUBJECT = 'Order o-9 for Ann';
const HTML = '<p>Order <b>o-9</b> is late, Ann.</p>';

let server: TestServer;
let fake: HttpFake;
let handler: FakeHandler;
let integrationCount = 0;

beforeAll(async () => {
  fake = await startHttpFake((request) => handler(request));
  server = await startTestServer({
    worker: true,
    env: deliveryEnv({ HERALD_JOB_ATTEMPTS: String(ATTEMPTS), HERALD_JOB_BACKOFF_MS: '20', HERALD_OUTBOUND_TIMEOUT_MS: String(TIMEOUT_MS) }),
  });
  await createSubscriber(server, { subscriberId: 'ann-fail', firstName: 'Ann', email: 'ann@example.com' });
  await createWorkflow(server, {
    workflowId: 'late',
    steps: [{ name: 'late', type: 'email', controlValues: { subject: 'Order {{ payload.orderId }} for {{ subscriber.firstName }}', body: '<p>Order <b>{{ payload.orderId }}</b> is late, {{ subscriber.firstName }}.</p>' } }],
  });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

/** A SendGrid integration at `baseUrl`, used through overrides so each test picks its own. */
async function sendgridAt(baseUrl: string): Promise<string> {
  integrationCount += 1;
  const identifier = `sendgrid-fail-${integrationCount}`;
  await createIntegration(server, { providerId: 'sendgrid', identifier, credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl } });
  return identifier;
}

function deliver(identifier: string) {
  return triggerAndSettle(server, { name: 'late', to: 'ann-fail', payload: { orderId: 'o-9' }, overrides: { integrationIdentifier: identifier } }, 20_000);
}

/** The stored error message shows what would have been sent, rendered, never the template. */
function expectErrorMessage(messages: any[], errorText: RegExp): void {
  expect(messages).toHaveLength(1);
  expect(messages[0]).toMatchObject({
    status: 'error',
    providerId: 'sendgrid',
    errorId: 'delivery_failed',
    subject: SUBJECT,
    content: HTML,
    email: 'ann@example.com',
  });
  expect(messages[0].errorText).toMatch(errorText);
  expect(messages[0].deliveredAt).toBeUndefined();
}

describe('provider failures', () => {
  it('vendor 500 then 202: retried with backoff, exactly one message, sent; a Failed retry detail then a Success with isRetry', async () => {
    const identifier = await sendgridAt(fake.url);
    const before = fake.requests.length;
    let calls = 0;
    handler = () => (++calls === 1 ? { status: 500, body: { errors: [{ message: 'internal' }] } } : { status: 202, body: '' });
    const delivery = await deliver(identifier);

    expect(fake.requests.length - before).toBe(2);
    expect(delivery.messages).toHaveLength(1);
    expect(delivery.messages[0]).toMatchObject({ status: 'sent', providerId: 'sendgrid', subject: SUBJECT, content: HTML });
    expect(delivery.job).toMatchObject({ status: 'completed', providerId: 'sendgrid' });
    const details = outcomeDetails(delivery.job);
    expect(details).toEqual([
      expect.objectContaining({
        status: 'Failed',
        isRetry: false,
        providerId: 'sendgrid',
        detail: 'Attempt 1 of 3 failed, will retry: SendGrid answered 500: {"errors":[{"message":"internal"}]}',
        raw: '{"errors":[{"message":"internal"}]}',
      }),
      expect.objectContaining({ status: 'Success', isRetry: true, providerId: 'sendgrid', detail: 'Message sent via sendgrid' }),
    ]);
    // The backoff: the retry ran no earlier than HERALD_JOB_BACKOFF_MS after the failure.
    expect(Date.parse(details[1].createdAt) - Date.parse(details[0].createdAt)).toBeGreaterThanOrEqual(20);
  });

  it('vendor 400: error at once, no retry; the Failed detail carries the vendor body as raw', async () => {
    const identifier = await sendgridAt(fake.url);
    const before = fake.requests.length;
    const vendorBody = { errors: [{ message: 'The from address does not match a verified Sender Identity.', field: 'from' }] };
    handler = () => ({ status: 400, body: vendorBody });
    const delivery = await deliver(identifier);

    expect(fake.requests.length - before).toBe(1);
    expectErrorMessage(delivery.messages, /^SendGrid answered 400: .*verified Sender Identity/);
    expect(delivery.job).toMatchObject({ status: 'failed', providerId: 'sendgrid' });
    expect(outcomeDetails(delivery.job)).toEqual([
      expect.objectContaining({ status: 'Failed', isRetry: false, providerId: 'sendgrid', raw: JSON.stringify(vendorBody), detail: expect.stringMatching(/^SendGrid answered 400/) }),
    ]);
  });

  it('a vendor that never answers: each attempt times out, retried, then error when attempts run out', async () => {
    const identifier = await sendgridAt(fake.url);
    const before = fake.requests.length;
    handler = () => 'hang';
    const delivery = await deliver(identifier);

    expect(fake.requests.length - before).toBe(ATTEMPTS);
    const timedOut = `Request to ${fake.url}/v3/mail/send timed out after ${TIMEOUT_MS} ms`;
    expectErrorMessage(delivery.messages, new RegExp(`^${timedOut.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(gave up after 3 attempts\\)$`));
    expect(delivery.job.status).toBe('failed');
    expect(outcomeDetails(delivery.job).map((detail) => [detail.status, detail.isRetry, detail.detail])).toEqual([
      ['Failed', false, `Attempt 1 of 3 failed, will retry: ${timedOut}`],
      ['Failed', true, `Attempt 2 of 3 failed, will retry: ${timedOut}`],
      ['Failed', true, `${timedOut} (gave up after 3 attempts)`],
    ]);
  });

  it('http_request answering 503 then 200: retried with backoff, completed; the failed attempt keeps its status and body', async () => {
    const before = fake.requests.length;
    let calls = 0;
    handler = () => (++calls === 1 ? { status: 503, body: { busy: true } } : { status: 200, body: { ok: true } });
    await createWorkflow(server, { workflowId: 'hook-retry', steps: [{ name: 'hook', type: 'http_request', controlValues: { method: 'POST', url: `${fake.url}/hook`, body: { n: 1 } } }] });
    const delivery = await triggerAndSettle(server, { name: 'hook-retry', to: 'ann-fail' });

    expect(fake.requests.length - before).toBe(2);
    expect(delivery.job.status).toBe('completed');
    const details = outcomeDetails(delivery.job);
    expect(details.map((detail) => [detail.status, detail.isRetry, detail.detail])).toEqual([
      ['Failed', false, `Attempt 1 of 3 failed, will retry: HTTP POST ${fake.url}/hook answered 503`],
      ['Success', true, `HTTP POST ${fake.url}/hook answered 200`],
    ]);
    expect(JSON.parse(details[0].raw)).toEqual({ status: 503, body: '{"busy":true}' });
  });

  it('http_request answering 404: failed at once, no retry', async () => {
    const before = fake.requests.length;
    handler = () => ({ status: 404, body: { missing: true } });
    await createWorkflow(server, { workflowId: 'hook-missing', steps: [{ name: 'hook', type: 'http_request', controlValues: { url: `${fake.url}/gone` } }] });
    const delivery = await triggerAndSettle(server, { name: 'hook-missing', to: 'ann-fail' });

    expect(fake.requests.length - before).toBe(1);
    expect(delivery.job.status).toBe('failed');
    expect(outcomeDetails(delivery.job).map((detail) => [detail.status, detail.detail])).toEqual([['Failed', `HTTP GET ${fake.url}/gone answered 404`]]);
  });

  it('an unreachable port: connection refused is retried, then error when attempts run out', async () => {
    const port = await unusedPort();
    const identifier = await sendgridAt(`http://127.0.0.1:${port}`);
    const delivery = await deliver(identifier);

    expectErrorMessage(delivery.messages, /^Request to http:\/\/127\.0\.0\.1:\d+\/v3\/mail\/send failed: ECONNREFUSED \(gave up after 3 attempts\)$/);
    const details = outcomeDetails(delivery.job);
    expect(details.map((detail) => detail.status)).toEqual(['Failed', 'Failed', 'Failed']);
    expect(details[0].detail).toMatch(/^Attempt 1 of 3 failed, will retry: .*ECONNREFUSED$/);
    expect(details[2]).toMatchObject({ isRetry: true, providerId: 'sendgrid' });
  });
});
