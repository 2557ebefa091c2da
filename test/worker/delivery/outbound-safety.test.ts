import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { startHttpFake, type HttpFake } from '../../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { createWorkflow } from '../engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv, outcomeDetails, setChannelCredentials, triggerAndSettle } from './delivery-helpers.js';

/**
 * User-supplied URLs (a subscriber's chat webhook, an integration's webhook, an http_request step) at a
 * metadata or private address are refused before any connection is made. Only 127.0.0.1 is allowed.
 * Proof that nothing left: the outbound fetch is observed, and no call ever targets those hosts.
 */
const METADATA_URL = 'http://169.254.169.254/latest/meta-data/iam';
const PRIVATE_URL = 'http://10.0.0.1/hooks/internal';

let server: TestServer;
let fake: HttpFake;
let fetchSpy: MockInstance<typeof fetch>;

beforeAll(async () => {
  fake = await startHttpFake((request) => ({ body: request.path === '/lookup' ? { tier: 'gold', points: 12 } : { ok: true } }));
  // Retries allowed: a refusal must still fail at once.
  server = await startTestServer({ worker: true, env: deliveryEnv({ HERALD_JOB_ATTEMPTS: '3' }) });
  await createSubscriber(server, { subscriberId: 'sam', firstName: 'Sam' });
  await createWorkflow(server, { workflowId: 'talk', steps: [{ name: 'talk', type: 'chat', controlValues: { body: 'Hi {{ subscriber.firstName }}' } }] });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});
beforeEach(() => {
  fetchSpy = vi.spyOn(globalThis, 'fetch');
});
afterEach(() => {
  fetchSpy.mockRestore();
});

/** Every URL fetched in this process during the test (the worker's outbound fetch included, see the lookup test). */
function fetchedUrls(): URL[] {
  return fetchSpy.mock.calls.map(([input]) => new URL(input instanceof Request ? input.url : String(input)));
}

function expectNothingSentTo(host: string): void {
  expect(fetchedUrls().map((url) => url.hostname)).not.toContain(host);
}

describe('outbound safety on delivery', () => {
  it("a subscriber's chat webhook at the metadata address is refused: error message, Failed detail naming it, no request", async () => {
    // The integration's own webhook points at the fake: it must not be used as a fallback either.
    await createIntegration(server, { providerId: 'slack', identifier: 'slack-safe', credentials: { webhookUrl: `${fake.url}/slack` } });
    await setChannelCredentials(server, 'sam', { providerId: 'slack', integrationIdentifier: 'slack-safe', credentials: { webhookUrl: METADATA_URL } });
    const before = fake.requests.length;
    const delivery = await triggerAndSettle(server, { name: 'talk', to: 'sam', overrides: { integrationIdentifier: 'slack-safe' } });

    expect(fake.requests.length).toBe(before);
    expectNothingSentTo('169.254.169.254');
    expect(delivery.messages).toHaveLength(1);
    expect(delivery.messages[0]).toMatchObject({
      status: 'error',
      providerId: 'slack',
      content: 'Hi Sam',
      directWebhookUrl: METADATA_URL,
      errorText: 'Outbound request to 169.254.169.254 refused: link-local address',
    });
    expect(delivery.job.status).toBe('failed');
    expect(outcomeDetails(delivery.job)).toEqual([
      expect.objectContaining({ status: 'Failed', isRetry: false, providerId: 'slack', detail: 'Outbound request to 169.254.169.254 refused: link-local address' }),
    ]);
  });

  it("an integration's webhook at a private address is refused the same way", async () => {
    await createIntegration(server, { providerId: 'chat-webhook', identifier: 'hook-private', credentials: { webhookUrl: PRIVATE_URL } });
    const delivery = await triggerAndSettle(server, { name: 'talk', to: 'sam', overrides: { integrationIdentifier: 'hook-private' } });

    expectNothingSentTo('10.0.0.1');
    expect(delivery.messages[0]).toMatchObject({ status: 'error', directWebhookUrl: PRIVATE_URL, errorText: 'Outbound request to 10.0.0.1 refused: private address' });
    expect(outcomeDetails(delivery.job)).toEqual([expect.objectContaining({ status: 'Failed', detail: 'Outbound request to 10.0.0.1 refused: private address' })]);
  });
});

describe('http_request steps', () => {
  it.each([
    ['169.254.169.254', METADATA_URL, 'link-local address'],
    ['10.0.0.1', PRIVATE_URL, 'private address'],
  ])('a URL at %s is refused with the address named on the job, and no request is made', async (host, url, reason) => {
    const workflowId = `probe-${host.replace(/\./g, '-')}`;
    await createWorkflow(server, {
      workflowId,
      steps: [
        { name: 'probe', type: 'http_request', controlValues: { method: 'POST', url, body: { who: '{{ subscriber.subscriberId }}' } } },
        { name: 'inbox', type: 'in_app', controlValues: { body: 'after the probe' } },
      ],
    });
    const delivery = await triggerAndSettle(server, { name: workflowId, to: 'sam' });

    expectNothingSentTo(host);
    const [probe, inbox] = delivery.event.jobs;
    expect(probe.status).toBe('failed');
    expect(outcomeDetails(probe)).toEqual([
      expect.objectContaining({ status: 'Failed', detail: `HTTP POST ${url} failed: Outbound request to ${host} refused: ${reason}` }),
    ]);
    // The step does not stop the workflow unless it says so.
    expect(inbox.status).toBe('completed');
  });

  it("exposes its answer to later steps' templates as steps.<stepId>", async () => {
    await createWorkflow(server, {
      workflowId: 'lookup-then-notify',
      steps: [
        { name: 'Lookup', stepId: 'lookup', type: 'http_request', controlValues: { method: 'GET', url: `${fake.url}/lookup` } },
        { name: 'inbox', type: 'in_app', controlValues: { body: 'Status {{ steps.lookup.status }}: {{ steps.lookup.body.tier }} with {{ steps.lookup.body.points }} points' } },
      ],
    });
    const delivery = await triggerAndSettle(server, { name: 'lookup-then-notify', to: 'sam' });

    expect(fake.requests.at(-1)).toMatchObject({ method: 'GET', path: '/lookup' });
    // The spy the refusal tests rely on does see the worker's outbound requests.
    expect(fetchedUrls().map(String)).toContain(`${fake.url}/lookup`);
    expect(delivery.event.jobs.map((job: any) => job.status)).toEqual(['completed', 'completed']);
    expect(delivery.messages.map((message) => message.content)).toEqual(['Status 200: gold with 12 points']);
  });
});
