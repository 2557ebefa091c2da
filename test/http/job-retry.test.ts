import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpFake, type FakeHandler, type HttpFake } from '../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody } from '../helpers/shape.js';
import { asDashboard, createDashboardUser, signIn } from '../helpers/dashboard.js';
import { createWorkflow } from '../worker/engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv, triggerAndSettle } from '../worker/delivery/delivery-helpers.js';
import { newId } from '../../src/domain/ids.js';

// Every dashboard user and sign-in costs a scrypt hash (about a second on the loaded 2-core test machine).
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

/**
 * POST /v1/notifications/{notificationId}/jobs/{jobId}/retry: a failed step against a local SendGrid fake is retried
 * after the fake recovers; the step then succeeds and the steps its failure had stopped continue.
 */
let server: TestServer;
let fake: HttpFake;
let handler: FakeHandler;

beforeAll(async () => {
  fake = await startHttpFake((request) => handler(request));
  server = await startTestServer({ worker: true, env: deliveryEnv() });
  await createSubscriber(server, { subscriberId: 'rita', firstName: 'Rita', email: 'rita@example.com' });
  await createIntegration(server, { providerId: 'novu', channel: 'in_app', identifier: 'inbox-retry' });
  await createIntegration(server, { providerId: 'sendgrid', identifier: 'sendgrid-retry', credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: fake.url } });
  await createWorkflow(server, {
    workflowId: 'receipt',
    steps: [
      { name: 'mail', type: 'email', shouldStopOnFail: true, controlValues: { subject: 'Receipt for {{ subscriber.firstName }}', body: '<p>Thanks {{ payload.item }}</p>' } },
      { name: 'inbox', type: 'in_app', controlValues: { body: 'Receipt sent for {{ payload.item }}' } },
    ],
  });
  await createDashboardUser(server, { email: 'retry-admin@example.com', role: 'admin' });
  await createDashboardUser(server, { email: 'retry-viewer@example.com', role: 'viewer' });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

async function failedDelivery() {
  handler = () => ({ status: 400, body: { errors: [{ message: 'bad request' }] } });
  const delivery = await triggerAndSettle(server, { name: 'receipt', to: 'rita', payload: { item: 'tea' } }, 20_000);
  const [mail, inbox] = delivery.event.jobs;
  expect(mail.status).toBe('failed');
  expect(inbox.status).toBe('skipped');
  expect(delivery.messages).toHaveLength(1);
  expect(delivery.messages[0]).toMatchObject({ channel: 'email', status: 'error' });
  return delivery;
}

describe('retry of a failed step', () => {
  it('runs the failed step again through the queue; it succeeds, is recorded as a retry, and the later steps continue', async () => {
    const delivery = await failedDelivery();
    const [mail] = delivery.event.jobs;
    const requestsBefore = fake.requests.length;
    handler = () => ({ status: 202, body: '' });

    const retried = await server.request('POST', `/v1/notifications/${delivery.event._id}/jobs/${mail._id}/retry`);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.body.data).toMatchObject({ _id: mail._id, status: 'queued', type: 'email' });
    expect(retried.body.data.executionDetails.at(-1)).toMatchObject({ status: 'Queued', isRetry: true, detail: 'Retry 1 requested' });

    await server.waitForIdle({ timeoutMs: 20_000 });
    expect(fake.requests.length - requestsBefore).toBe(1);
    expect(JSON.parse(fake.requests.at(-1)!.body)).toMatchObject({ subject: 'Receipt for Rita' });
    const event = (await server.request('GET', `/v1/notifications/${delivery.event._id}`)).body.data;
    const [mailAfter, inboxAfter] = event.jobs;
    expect(mailAfter.status).toBe('completed');
    expect(mailAfter.executionDetails.at(-1)).toMatchObject({ status: 'Success', isRetry: true, providerId: 'sendgrid' });
    // The earlier failure stays in the timeline.
    expect(mailAfter.executionDetails.some((detail: any) => detail.status === 'Failed' && detail.isRetry === false)).toBe(true);
    expect(inboxAfter.status).toBe('completed');

    const messages = (await server.request('GET', `/v1/messages?transactionId=${delivery.transactionId}&limit=10`)).body.data;
    const email = messages.filter((message: any) => message.channel === 'email');
    expect(email).toHaveLength(1);
    expect(email[0]).toMatchObject({ _id: delivery.messages[0]._id, status: 'sent', subject: 'Receipt for Rita' });
    expect(email[0].errorText).toBeUndefined();
    expect(messages.filter((message: any) => message.channel === 'in_app')).toHaveLength(1);

    // Not failed any more: a second retry is refused and sends nothing.
    const again = await server.request('POST', `/v1/notifications/${delivery.event._id}/jobs/${mail._id}/retry`);
    expect(again.status).toBe(409);
    expectErrorBody(again.body, 409);
    expect(again.body.message).toBe('Only a failed step can be retried; this one is completed');
    await server.waitForIdle();
    expect(fake.requests.length - requestsBefore).toBe(1);
  });

  it('records a retry that fails again on the step and its message, and allows another', async () => {
    const delivery = await failedDelivery();
    const [mail] = delivery.event.jobs;
    handler = () => ({ status: 401, body: { errors: [{ message: 'still bad' }] } });
    expect((await server.request('POST', `/v1/notifications/${delivery.event._id}/jobs/${mail._id}/retry`)).status).toBe(201);
    await server.waitForIdle({ timeoutMs: 20_000 });
    const event = (await server.request('GET', `/v1/notifications/${delivery.event._id}`)).body.data;
    expect(event.jobs[0].status).toBe('failed');
    expect(event.jobs[0].executionDetails.at(-1)).toMatchObject({ status: 'Failed', isRetry: true });
    expect(event.jobs[0].executionDetails.at(-1).detail).toMatch(/still bad/);
    expect(event.jobs[1].status).toBe('skipped');
    const messages = (await server.request('GET', `/v1/messages?transactionId=${delivery.transactionId}`)).body.data;
    expect(messages).toHaveLength(1);
    expect(messages[0].errorText).toMatch(/still bad/);

    handler = () => ({ status: 202, body: '' });
    const second = await server.request('POST', `/v1/notifications/${delivery.event._id}/jobs/${mail._id}/retry`);
    expect(second.body.data.executionDetails.at(-1).detail).toBe('Retry 2 requested');
    await server.waitForIdle({ timeoutMs: 20_000 });
    const done = (await server.request('GET', `/v1/notifications/${delivery.event._id}`)).body.data;
    expect(done.jobs.map((job: any) => job.status)).toEqual(['completed', 'completed']);
  });

  it('is for API keys and dashboard admins, never viewers; other environments and unknown ids are 404s', async () => {
    const delivery = await failedDelivery();
    const [mail, inbox] = delivery.event.jobs;
    const path = `/v1/notifications/${delivery.event._id}/jobs/${mail._id}/retry`;
    const viewer = await signIn(server, 'retry-viewer@example.com');
    expect((await asDashboard(server, viewer, 'POST', path)).status).toBe(403);
    expect((await server.request('POST', path, { key: server.prodKey })).status).toBe(404);
    expect((await server.request('POST', `/v1/notifications/${delivery.event._id}/jobs/${newId()}/retry`)).status).toBe(404);
    expect((await server.request('POST', `/v1/notifications/${newId()}/jobs/${mail._id}/retry`)).status).toBe(404);
    expect((await server.request('POST', `/v1/notifications/${delivery.event._id}/jobs/not-an-id/retry`)).status).toBe(404);
    const skipped = await server.request('POST', `/v1/notifications/${delivery.event._id}/jobs/${inbox._id}/retry`);
    expect(skipped.status).toBe(409);
    expect((await server.request('GET', `/v1/notifications/${delivery.event._id}`)).body.data.jobs[0].status).toBe('failed');

    handler = () => ({ status: 202, body: '' });
    const admin = await signIn(server, 'retry-admin@example.com');
    expect((await asDashboard(server, admin, 'POST', path, { csrf: false })).status).toBe(403);
    const byAdmin = await asDashboard(server, admin, 'POST', path);
    expect(byAdmin.status).toBe(201);
    await server.waitForIdle({ timeoutMs: 20_000 });
    expect((await server.request('GET', `/v1/notifications/${delivery.event._id}`)).body.data.jobs[0].status).toBe('completed');
    const audit = await asDashboard(server, admin, 'GET', '/v1/dashboard/audit-log?limit=100');
    expect(audit.body.data.find((entry: any) => entry.action === 'job.retried' && entry.target.id === mail._id)).toMatchObject({
      actor: { kind: 'user', label: 'retry-admin@example.com' },
    });
  });
});
