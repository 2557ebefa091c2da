import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { createIntegration, createSubscriber, deliveryEnv } from '../worker/delivery/delivery-helpers.js';
import { createWorkflow, messagesOf, trigger } from '../worker/engine-helpers.js';
import { messageEvent } from '../../src/domain/webhooks.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 120_000 });

/**
 * Outbound webhooks end to end (HERALD_TEST_MODE=embedded or scaleout): every event type from its cause reaches a
 * local receiver that verifies each request with `standardwebhooks` and svix's `Webhook.verify`; filters, disabled and
 * deleted endpoints, rotation with its overlap, retries with the same webhook-id, a burst of 300.
 */
let server: TestServer;
let receiver: WebhookReceiver;
let mail: HttpFake;
let mailStatus = 202;
let inboxToken: string;
const endpoints: Record<string, { id: string; secret: string }> = {};

async function createEndpoint(name: string, body: Record<string, unknown> = {}) {
  const response = await server.request('POST', '/v2/webhooks/endpoints', { body: { url: `${receiver.url}/${name}`, description: name, ...body } });
  expect(response.status, response.text).toBe(201);
  endpoints[name] = { id: response.body.data._id, secret: response.body.data.secret };
  receiver.secrets.push(response.body.data.secret);
  return endpoints[name];
}

const at = (name: string) => (webhook: ReceivedWebhook) => webhook.path === `/${name}`;
const ofType = (name: string, type: string, match: (body: any) => boolean = () => true) => (webhook: ReceivedWebhook) =>
  webhook.path === `/${name}` && webhook.body?.type === type && match(webhook.body);

/** Waits for one event of `type` at endpoint `name` and checks what every event must be: signed, shaped, verifiable. */
async function expectEvent(name: string, type: string, match: (body: any) => boolean = () => true): Promise<any> {
  const [webhook] = await receiver.waitFor(ofType(name, type, match));
  const secretIndex = receiver.secrets.indexOf(endpoints[name].secret);
  expect(webhook.verifiedWith, `${type} verified by standardwebhooks and svix`).toContain(secretIndex);
  expect(webhook.id).toBe(webhook.body.id);
  expect(Math.abs(Number(webhook.timestamp) - Date.now() / 1000)).toBeLessThan(60);
  expect(webhook.body).toMatchObject({ type, environmentId: server.devEnvironmentId, data: { object: expect.any(Object) } });
  expect(Object.keys(webhook.body).sort()).toEqual(['data', 'environmentId', 'id', 'object', 'timestamp', 'type']);
  expect(new Date(webhook.body.timestamp).toISOString()).toBe(webhook.body.timestamp);
  return webhook.body;
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  mail = await startHttpFake(() => ({ status: mailStatus, body: mailStatus < 300 ? '' : { errors: [{ message: 'rejected by the fake' }] } }));
  server = await startTestServer({
    worker: true,
    env: deliveryEnv({ HERALD_WEBHOOK_RELAY_MS: '20', HERALD_WEBHOOK_RETRY_SCHEDULE: '0,300ms,600ms' }),
  });
  await createIntegration(server, { providerId: 'novu', channel: 'in_app', identifier: 'inbox' });
  await createIntegration(server, { providerId: 'sendgrid', identifier: 'sendgrid', credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: mail.url } });
  await createSubscriber(server, { subscriberId: 'ada', firstName: 'Ada', email: 'ada@example.com' });
  await createEndpoint('all');
  await createEndpoint('filtered', { eventTypes: ['workflow.created'] });
  await createEndpoint('disabled', { enabled: false });
  await createEndpoint('deleted');
  expect((await server.request('DELETE', `/v2/webhooks/endpoints/${endpoints.deleted.id}`)).status).toBe(200);
  const environment = await server.deps.store.tenancy.getEnvironment(server.devEnvironmentId);
  const session = await server.request('POST', '/v1/inbox/session', { key: null, body: { applicationIdentifier: environment!.identifier, subscriber: { subscriberId: 'ada' } } });
  expect(session.status, session.text).toBe(201);
  inboxToken = session.body.data.token;
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await mail?.close();
});

const inbox = (method: string, path: string, body?: unknown) =>
  server.request(method, `/v1/inbox${path}`, { bearer: inboxToken, body: body ?? (method === 'GET' || method === 'DELETE' ? undefined : {}) });

describe('every event type fires from its cause', () => {
  it('workflow.created, workflow.updated, workflow.deleted', async () => {
    await createWorkflow(server, { workflowId: 'hello', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{ payload.name }}' } }] });
    const created = await expectEvent('all', 'workflow.created', (body) => body.data.object.workflowId === 'hello');
    expect(created).toMatchObject({ object: 'workflow', data: { object: { workflowId: 'hello', name: 'hello', steps: [{ type: 'in_app' }] } } });
    expect((await server.request('PATCH', '/v2/workflows/hello', { body: { description: 'greets' } })).status).toBe(200);
    const updated = await expectEvent('all', 'workflow.updated', (body) => body.data.object.workflowId === 'hello');
    expect(updated.data).toMatchObject({ object: { description: 'greets' }, previousObject: { description: '' } });

    await createWorkflow(server, { workflowId: 'short-lived', steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'x' } }] });
    expect((await server.request('DELETE', '/v2/workflows/short-lived')).status).toBe(204);
    const deleted = await expectEvent('all', 'workflow.deleted', (body) => body.data.object.workflowId === 'short-lived');
    expect(deleted.data.object.deleted).toBe(true);
  });

  it('an in-app delivery emits message.sent and then message.delivered, with the message fields', async () => {
    const response = await trigger(server, { name: 'hello', to: 'ada', payload: { name: 'Ada' }, transactionId: 'tx-in-app' });
    expect(response.status, response.text).toBe(201);
    const sent = await expectEvent('all', 'message.sent', (body) => body.data.object.transactionId === 'tx-in-app');
    const delivered = await expectEvent('all', 'message.delivered', (body) => body.data.object.transactionId === 'tx-in-app');
    expect(sent.object).toBe('message');
    expect(sent.data.object).toMatchObject({
      transactionId: 'tx-in-app',
      channel: 'in_app',
      subscriberId: 'ada',
      workflowId: 'hello',
      templateIdentifier: 'hello',
      read: false,
      seen: false,
      status: 'sent',
      providerId: 'novu',
      deliveredAt: [expect.any(String)],
    });
    expect(delivered.data.object._id).toBe(sent.data.object._id);
    // Recorded in that order (event ids sort by recording); arrival order is not promised (several workers).
    expect(sent.id < delivered.id).toBe(true);
  });

  it('an email sent and an email that fails: message.sent and message.failed with the error', async () => {
    await createWorkflow(server, { workflowId: 'mail', steps: [{ name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: '<p>Hi</p>' } }] });
    mailStatus = 202;
    expect((await trigger(server, { name: 'mail', to: 'ada', transactionId: 'tx-mail-ok' })).status).toBe(201);
    const sent = await expectEvent('all', 'message.sent', (body) => body.data.object.transactionId === 'tx-mail-ok');
    expect(sent.data.object).toMatchObject({ channel: 'email', status: 'sent', providerId: 'sendgrid', subscriberId: 'ada' });

    mailStatus = 400;
    expect((await trigger(server, { name: 'mail', to: 'ada', transactionId: 'tx-mail-bad' })).status).toBe(201);
    const failed = await expectEvent('all', 'message.failed', (body) => body.data.object.transactionId === 'tx-mail-bad');
    expect(failed.data.object).toMatchObject({ channel: 'email', status: 'error', errorText: expect.stringContaining('') });
    expect(failed.data.error).toMatchObject({ message: expect.any(String), code: 'delivery_failed' });
    mailStatus = 202;
  });

  it('read, unread and seen through the API mark-as', async () => {
    const [message] = await messagesOf(server, 'tx-in-app');
    for (const markAs of ['seen', 'read', 'unread'] as const) {
      const response = await server.request('POST', '/v1/subscribers/ada/messages/mark-as', { body: { messageId: message._id, markAs } });
      expect(response.status, response.text).toBe(201);
      const event = await expectEvent('all', `message.${markAs}`, (body) => body.data.object._id === message._id);
      expect(event.data.object.subscriberId).toBe('ada');
    }
    const read = receiver.received.find(ofType('all', 'message.read', (body) => body.data.object._id === message._id))!.body;
    expect(read.data).toMatchObject({ object: { read: true, seen: true }, previousObject: { read: false, seen: true } });
  });

  it('archive, unarchive, snooze, unsnooze and delete through the Inbox; delete through the API', async () => {
    const [message] = await messagesOf(server, 'tx-in-app');
    for (const [path, type] of [
      ['archive', 'message.archived'],
      ['unarchive', 'message.unarchived'],
      ['read', 'message.read'],
    ] as const) {
      const response = await inbox('PATCH', `/notifications/${message._id}/${path}`);
      expect(response.status, response.text).toBe(200);
      await expectEvent('all', type, (body) => body.data.object._id === message._id && (type !== 'message.read' || body.data.previousObject?.read === false));
    }
    const until = new Date(Date.now() + 3_600_000).toISOString();
    expect((await inbox('PATCH', `/notifications/${message._id}/snooze`, { snoozeUntil: until })).status).toBe(200);
    const snoozed = await expectEvent('all', 'message.snoozed', (body) => body.data.object._id === message._id);
    expect(snoozed.data.object.snoozedUntil).toBe(until);
    expect((await inbox('PATCH', `/notifications/${message._id}/unsnooze`)).status).toBe(200);
    await expectEvent('all', 'message.unsnoozed', (body) => body.data.object._id === message._id);

    expect((await inbox('DELETE', `/notifications/${message._id}/delete`)).status).toBe(204);
    const deleted = await expectEvent('all', 'message.deleted', (body) => body.data.object._id === message._id);
    expect(deleted.data.object.deleted).toBe(true);

    expect((await trigger(server, { name: 'hello', to: 'ada', payload: { name: 'again' }, transactionId: 'tx-api-delete' })).status).toBe(201);
    const second = await expectEvent('all', 'message.delivered', (body) => body.data.object.transactionId === 'tx-api-delete');
    expect((await server.request('DELETE', `/v1/messages/${second.data.object._id}`)).status).toBe(200);
    await expectEvent('all', 'message.deleted', (body) => body.data.object._id === second.data.object._id);
  });

  it('preference.updated, globally and per workflow', async () => {
    expect((await server.request('PATCH', '/v2/subscribers/ada/preferences', { body: { channels: { email: false } } })).status).toBe(200);
    const global = await expectEvent('all', 'preference.updated', (body) => body.data.object.level === 'global');
    expect(global.data.object).toMatchObject({ subscriberId: 'ada', level: 'global', preference: { channels: { email: false } } });
    expect((await server.request('PATCH', '/v2/subscribers/ada/preferences', { body: { workflowId: 'hello', channels: { in_app: false } } })).status).toBe(200);
    const workflow = await expectEvent('all', 'preference.updated', (body) => body.data.object.level === 'workflow');
    expect(workflow.data.object).toMatchObject({ subscriberId: 'ada', workflowId: 'hello', preference: { channels: { in_app: false } } });
    expect((await server.request('PATCH', '/v2/subscribers/ada/preferences', { body: { channels: { email: true } } })).status).toBe(200);
    expect((await server.request('PATCH', '/v2/subscribers/ada/preferences', { body: { workflowId: 'hello', channels: { in_app: true } } })).status).toBe(200);
  });

  it('webhook.test from the test route', async () => {
    const response = await server.request('POST', `/v2/webhooks/endpoints/${endpoints.filtered.id}/test`);
    expect(response.status, response.text).toBe(201);
    // Sent whatever the endpoint's filter says.
    const test = await expectEvent('filtered', 'webhook.test');
    expect(test).toMatchObject({ object: 'webhook', data: { object: { endpointId: endpoints.filtered.id } } });
  });

  it('provider report events (bounced, complained, opened, clicked) recorded through store.events in a transaction are delivered', async () => {
    const [message] = await messagesOf(server, 'tx-mail-ok');
    const stored = (await server.deps.store.messages.get(server.devEnvironmentId, message._id))!;
    const types = ['message.bounced', 'message.complained', 'message.opened', 'message.clicked'] as const;
    await server.deps.store.transaction(async (tx) => {
      await tx.events.record(server.devEnvironmentId, types.map((type) => messageEvent(type, stored, { subscriberId: 'ada' })));
    });
    for (const type of types) await expectEvent('all', type, (body) => body.data.object._id === message._id);
  });

  it('a rolled-back change records no event', async () => {
    const before = receiver.received.length;
    await expect(
      server.deps.store.transaction(async (tx) => {
        await tx.events.record(server.devEnvironmentId, [{ type: 'message.opened', object: 'message', data: { object: { rolledBack: true } } }]);
        throw new Error('change failed');
      }),
    ).rejects.toThrow('change failed');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received.slice(before).some((w) => w.body?.data?.object?.rolledBack)).toBe(false);
  });
});

describe('endpoints', () => {
  it('a filter passes only its event types; disabled and deleted endpoints get nothing', async () => {
    const filtered = receiver.received.filter(at('filtered')).map((w) => w.body.type);
    expect(new Set(filtered)).toEqual(new Set(['workflow.created', 'webhook.test']));
    expect(receiver.received.filter(at('disabled'))).toHaveLength(0);
    expect(receiver.received.filter(at('deleted'))).toHaveLength(0);

    // Enabling the disabled endpoint: it receives the events from then on.
    expect((await server.request('PATCH', `/v2/webhooks/endpoints/${endpoints.disabled.id}`, { body: { enabled: true, eventTypes: ['workflow.updated'] } })).status).toBe(200);
    expect((await server.request('PATCH', '/v2/workflows/hello', { body: { description: 'enabled now' } })).status).toBe(200);
    await expectEvent('disabled', 'workflow.updated', (body) => body.data.object.description === 'enabled now');
    expect((await server.request('PATCH', `/v2/webhooks/endpoints/${endpoints.disabled.id}`, { body: { enabled: false } })).status).toBe(200);
  });

  it('after a rotation events carry both signatures, each verifying with its own secret', async () => {
    const endpoint = await createEndpoint('rotating', { eventTypes: ['workflow.updated'] });
    const rotated = await server.request('POST', `/v2/webhooks/endpoints/${endpoint.id}/rotate-secret`);
    expect(rotated.status, rotated.text).toBe(201);
    const secret = rotated.body.data.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(endpoint.secret);
    receiver.secrets.push(secret);
    expect((await server.request('GET', `/v2/webhooks/endpoints/${endpoint.id}/secret`)).body.data.secret).toBe(secret);

    expect((await server.request('PATCH', '/v2/workflows/hello', { body: { description: 'rotated' } })).status).toBe(200);
    const [webhook] = await receiver.waitFor(ofType('rotating', 'workflow.updated', (body) => body.data.object.description === 'rotated'));
    expect(webhook.signatures).toHaveLength(2);
    expect(webhook.verifiedWith).toEqual(expect.arrayContaining([receiver.secrets.indexOf(endpoint.secret), receiver.secrets.indexOf(secret)]));
  });

  it('a receiver failing the first attempts gets the event later with the same webhook-id; the log shows each failure', async () => {
    const endpoint = await createEndpoint('flaky', { eventTypes: ['workflow.updated'] });
    const big = 'x'.repeat(5000);
    let calls = 0;
    receiver.reply = (request) => (request.path === '/flaky' && ++calls <= 2 ? { status: 503, body: `unavailable ${calls} ${big}` } : { status: 204 });
    try {
      expect((await server.request('PATCH', '/v2/workflows/hello', { body: { description: 'flaky' } })).status).toBe(200);
      const arrivals = await receiver.waitFor(ofType('flaky', 'workflow.updated', (body) => body.data.object.description === 'flaky'), 3);
      expect(new Set(arrivals.map((w) => w.id)).size).toBe(1);
      expect(new Set(arrivals.map((w) => w.body.id))).toEqual(new Set([arrivals[0].id]));
      for (const arrival of arrivals) expect(arrival.verifiedWith).toContain(receiver.secrets.indexOf(endpoint.secret));
      // The retry waited for the schedule (300 ms, then 600 ms).
      expect(Number(arrivals[2].timestamp) - Number(arrivals[0].timestamp)).toBeGreaterThanOrEqual(0);

      await expect.poll(async () => (await server.request('GET', `/v2/webhooks/endpoints/${endpoint.id}/attempts?status=success`)).body.data.length).toBe(1);
      const log = (await server.request('GET', `/v2/webhooks/endpoints/${endpoint.id}/attempts`)).body;
      expect(log.data.map((a: any) => [a.attempt, a.status, a.responseStatusCode])).toEqual([
        [3, 'success', 204],
        [2, 'failed', 503],
        [1, 'failed', 503],
      ]);
      for (const attempt of log.data) {
        expect(attempt).toMatchObject({ eventType: 'workflow.updated', webhookId: arrivals[0].id, durationMs: expect.any(Number) });
      }
      expect(log.data[1].responseBodySnippet).toMatch(/^unavailable 2 x+…\[truncated \d+ chars\]$/);
      expect(log.data[1].responseBodySnippet.length).toBeLessThan(1100);
      const failedOnly = (await server.request('GET', `/v2/webhooks/endpoints/${endpoint.id}/attempts?status=failed`)).body.data;
      expect(failedOnly).toHaveLength(2);
      const second = Date.parse(log.data[1].createdAt);
      expect(Date.parse(log.data[0].dueAt) - second).toBeGreaterThanOrEqual(550);
    } finally {
      receiver.reply = () => ({ status: 204 });
    }
  });

  it('a failed event is sent again by resend and by recover, with its webhook-id', async () => {
    const endpoint = await createEndpoint('down', { eventTypes: ['workflow.updated'] });
    receiver.reply = (request) => (request.path === '/down' ? { status: 500, body: 'down' } : { status: 204 });
    try {
      expect((await server.request('PATCH', '/v2/workflows/hello', { body: { description: 'while down' } })).status).toBe(200);
      // Three attempts (the test schedule), all failed: nothing more is scheduled.
      await expect
        .poll(async () => (await server.request('GET', `/v2/webhooks/endpoints/${endpoint.id}/attempts?status=failed`)).body.data.length, { timeout: 15_000 })
        .toBe(3);
      const attempts = (await server.request('GET', `/v2/webhooks/endpoints/${endpoint.id}/attempts`)).body.data;
      expect(attempts.every((a: any) => a.status === 'failed')).toBe(true);
      const webhookId = attempts[0].webhookId;
      receiver.reply = () => ({ status: 204 });

      const resend = await server.request('POST', `/v2/webhooks/attempts/${attempts[0]._id}/resend`);
      expect(resend.status, resend.text).toBe(201);
      expect(resend.body.data).toMatchObject({ webhookId, status: 'pending' });
      await receiver.waitFor((w) => w.path === '/down' && w.id === webhookId, 4);

      const since = new Date(Date.now() - 60_000).toISOString();
      const none = await server.request('POST', `/v2/webhooks/endpoints/${endpoint.id}/recover`, { body: { since } });
      expect(none.body.data.recovered).toBe(0);

      receiver.reply = (request) => (request.path === '/down' ? { status: 500, body: 'down' } : { status: 204 });
      expect((await server.request('PATCH', '/v2/workflows/hello', { body: { description: 'down again' } })).status).toBe(200);
      await expect
        .poll(async () => (await server.request('GET', `/v2/webhooks/endpoints/${endpoint.id}/attempts?status=failed`)).body.data.length, { timeout: 15_000 })
        .toBe(6);
      receiver.reply = () => ({ status: 204 });
      const recovered = await server.request('POST', `/v2/webhooks/endpoints/${endpoint.id}/recover`, { body: { since } });
      expect(recovered.status, recovered.text).toBe(201);
      expect(recovered.body.data.recovered).toBe(1);
      await receiver.waitFor((w) => w.path === '/down' && w.body.data.object.description === 'down again', 4);
    } finally {
      receiver.reply = () => ({ status: 204 });
    }
  });

  // Generous time: the shared test machine runs 300 triggers and their webhooks slowly under load.
  it('a burst of 300 events all arrive, once each at least, all verified', { timeout: 240_000 }, async () => {
    const endpoint = await createEndpoint('burst', { eventTypes: ['message.delivered'] });
    const index = receiver.secrets.indexOf(endpoint.secret);
    for (let batch = 0; batch < 3; batch++) {
      const events = Array.from({ length: 100 }, (_, i) => ({ name: 'hello', to: 'ada', payload: { name: `n${batch * 100 + i}` }, transactionId: `burst-${batch * 100 + i}` }));
      const response = await server.request('POST', '/v1/events/trigger/bulk', { body: { events } });
      expect(response.status, response.text).toBe(201);
    }
    const arrivals = await receiver.waitFor(ofType('burst', 'message.delivered', (body) => String(body.data.object.transactionId).startsWith('burst-')), 300, 220_000);
    const transactions = new Set(arrivals.map((w) => w.body.data.object.transactionId));
    expect(transactions.size).toBe(300);
    expect(arrivals.every((w) => w.verifiedWith.includes(index))).toBe(true);
  });
});
