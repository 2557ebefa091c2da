import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { createIntegration, createSubscriber, deliveryEnv } from './delivery/delivery-helpers.js';
import { createWorkflow, trigger } from './engine-helpers.js';
import type { DomainEvent } from '../../src/domain/webhooks.js';
import { JOB_NAMES } from '../../src/queue/jobs.js';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

/**
 * The worker's webhook relay (src/worker/webhook-relay.ts), in the mode HERALD_TEST_MODE selects: first attempts go
 * out from the relay in batches, not as one queue job each, and fewer go out at once while the worker runs jobs.
 */
let server: TestServer;
let receiver: WebhookReceiver;
let mail: HttpFake;
/** While set, the mail provider fake answers only once it resolves (a job held running for as long as a test needs). */
let mailGate: Promise<void> | undefined;
/** deliver-webhook jobs the queue was given (the queue itself is real; this only counts). */
let webhookJobs = 0;
/** The attempt ids of those jobs. */
const webhookJobAttempts = new Set<string>();

const event = (n: number): DomainEvent => ({ type: 'message.opened', object: 'message', data: { object: { _id: `relay-${n}`, channel: 'email', status: 'sent' } } });

async function record(count: number, from = 0) {
  const events = Array.from({ length: count }, (_, i) => event(from + i));
  await server.deps.store.transaction((tx) => tx.events.record(server.devEnvironmentId, events).then(() => undefined));
}

/** Tracks requests in flight at the receiver's `path` while each takes `delayMs`: answers the most seen at once. */
function slowReceiver(path: string, delayMs: number) {
  let inFlight = 0;
  let most = 0;
  receiver.reply = async (request) => {
    if (request.path !== path) return { status: 204 };
    most = Math.max(most, ++inFlight);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    inFlight--;
    return { status: 204 };
  };
  return () => most;
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  mail = await startHttpFake(async () => {
    await mailGate;
    return { status: 202, body: '' };
  });
  // The outbound timeout outlasts any gate a test holds the mail provider's answer with (deliveryEnv's 3 s would end
  // the job, and with it the worker's busy state, while the test still counts on it).
  server = await startTestServer({ worker: true, env: deliveryEnv({ HERALD_WEBHOOK_RELAY_MS: '20', HERALD_WEBHOOK_PRESENCE_CACHE_MS: '0', HERALD_OUTBOUND_TIMEOUT_MS: '120000' }) });
  const queue = server.deps.queue;
  const enqueue = queue.enqueue.bind(queue);
  const enqueueMany = queue.enqueueMany.bind(queue);
  queue.enqueue = (name, payload, options) => {
    if (name === JOB_NAMES.deliverWebhook) (webhookJobs++, webhookJobAttempts.add((payload as { attemptId: string }).attemptId));
    return enqueue(name, payload, options);
  };
  queue.enqueueMany = (name, jobs) => {
    if (name === JOB_NAMES.deliverWebhook) {
      webhookJobs += jobs.length;
      for (const job of jobs) webhookJobAttempts.add((job.payload as { attemptId: string }).attemptId);
    }
    return enqueueMany(name, jobs);
  };
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await mail?.close();
});

async function createEndpoint(name: string) {
  const response = await server.request('POST', '/v2/webhooks/endpoints', { body: { url: `${receiver.url}/${name}`, eventTypes: ['message.opened'] } });
  expect(response.status, response.text).toBe(201);
  receiver.secrets.push(response.body.data.secret);
  return response.body.data._id as string;
}

async function deleteEndpoint(id: string) {
  expect((await server.request('DELETE', `/v2/webhooks/endpoints/${id}`)).status).toBe(200);
}

describe('webhook relay', () => {
  it('sends the first attempts of recorded events itself: no queue job per event, each logged once as a success', async () => {
    const id = await createEndpoint('batch');
    webhookJobs = 0;
    await record(250);
    const arrivals = await receiver.waitFor((w) => w.path === '/batch', 250, 60_000);
    expect(new Set(arrivals.map((w) => w.id)).size).toBe(250);
    await expect
      .poll(async () => (await server.request('GET', `/v2/webhooks/endpoints/${id}/attempts?status=success&limit=100&page=2`)).body.data.length, { timeout: 20_000 })
      .toBe(50);
    expect((await server.request('GET', `/v2/webhooks/endpoints/${id}/attempts?status=pending`)).body.data).toEqual([]);
    expect(webhookJobs).toBe(0);
    await deleteEndpoint(id);
  });

  it('a failed first attempt is retried through the queue, as before', async () => {
    const id = await createEndpoint('retried');
    let calls = 0;
    receiver.reply = (request) => (request.path === '/retried' && ++calls === 1 ? { status: 503, body: 'busy' } : { status: 204 });
    webhookJobs = 0;
    await record(1, 1000);
    const arrivals = await receiver.waitFor((w) => w.path === '/retried', 2, 30_000);
    expect(arrivals[1].id).toBe(arrivals[0].id);
    expect(webhookJobs).toBe(1);
    receiver.reply = () => ({ status: 204 });
    await deleteEndpoint(id);
  });

  it('an endpoint already failing gets its first attempts through queue jobs, so it cannot hold up the batch', async () => {
    const failing = await createEndpoint('failing');
    const healthy = await createEndpoint('healthy');
    let failingCalls = 0;
    receiver.reply = (request) => (request.path === '/failing' ? (++failingCalls, { status: 503, body: 'down' }) : { status: 204 });
    await record(1, 4000);
    // Its first failure marks it failing (and queues the retry).
    await expect.poll(() => failingCalls, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
    await expect
      .poll(async () => (await server.request('GET', `/v2/webhooks/endpoints/${failing}`)).body.data.failingSince ?? null, { timeout: 20_000 })
      .not.toBeNull();
    const healthyBefore = receiver.received.filter((w) => w.path === '/healthy').length;
    await record(5, 4100);
    await receiver.waitFor((w) => w.path === '/healthy', healthyBefore + 5, 30_000);
    // The five new events' first attempts to the failing endpoint were handed to queue jobs, not sent by the relay.
    const firstAttempts = async () =>
      ((await server.request('GET', `/v2/webhooks/endpoints/${failing}/attempts?limit=100`)).body.data as Array<{ _id: string; attempt?: number }>)
        .filter((a) => webhookJobAttempts.has(a._id));
    await expect.poll(async () => (await firstAttempts()).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(6);
    const stored = await Promise.all((await firstAttempts()).map((a) => server.deps.store.webhooks.getAttempt(server.devEnvironmentId, a._id)));
    expect(stored.filter((a) => a?.attempt === 1).length).toBe(5);
    receiver.reply = () => ({ status: 204 });
    await deleteEndpoint(failing);
    await deleteEndpoint(healthy);
  });

  it('idle, sends many at once; while the worker runs a job, at most two at once', async () => {
    const id = await createEndpoint('lanes');
    const idleMost = slowReceiver('/lanes', 150);
    await record(48, 2000);
    await receiver.waitFor((w) => w.path === '/lanes', 48, 60_000);
    expect(idleMost()).toBeGreaterThan(4);

    // An email whose provider answers only once the next events are in keeps one job running while they go out. (It
    // answered after a fixed 6 s, which the 3 s outbound timeout cut short: on a loaded machine the 24 sends, two at a
    // time, could outlast the job, and the rest went out sixteen at once.)
    await createIntegration(server, { providerId: 'sendgrid', identifier: 'slow-mail', credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: mail.url } });
    await createSubscriber(server, { subscriberId: 'relay-ada', email: 'ada@example.com' });
    await createWorkflow(server, { workflowId: 'slow-mail', steps: [{ name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: '<p>Hi</p>' } }] });
    let answerMail!: () => void;
    mailGate = new Promise((resolve) => (answerMail = resolve));
    try {
      const mailRequests = mail.requests.length;
      expect((await trigger(server, { name: 'slow-mail', to: 'relay-ada' })).status).toBe(201);
      await expect.poll(() => mail.requests.length, { timeout: 20_000 }).toBeGreaterThan(mailRequests);
      const busyMost = slowReceiver('/lanes', 150);
      const before = receiver.received.filter((w) => w.path === '/lanes').length;
      await record(24, 3000);
      await receiver.waitFor((w) => w.path === '/lanes', before + 24, 60_000);
      expect(busyMost()).toBeLessThanOrEqual(2);
    } finally {
      answerMail();
      mailGate = undefined;
    }
    receiver.reply = () => ({ status: 204 });
    await deleteEndpoint(id);
  });
});
