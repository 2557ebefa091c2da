import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/api';
import { ProvidersIdEnum } from '@novu/api/models/components/index.js';
import { startHttpFake, type HttpFake } from '../fakes/http-fake.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * `@novu/api` validates every response against closed enums (a job's providerId, type, execution-detail status,
 * source, digest units, ...). Workflows with in_app, email, sms, chat, push, delay and digest steps run against local
 * fakes (a provider that fails, one that answers, channels with no active integration) while the SDK lists and
 * retrieves their events at random moments: every answer, in whatever state its jobs are, must pass the SDK.
 */
const PROVIDER_IDS = new Set<string>(Object.values(ProvidersIdEnum));
const TERMINAL = new Set(['completed', 'failed', 'canceled', 'merged', 'skipped']);

let server: TestServer;
let novu: Novu;
let emailFake: HttpFake;
let chatFake: HttpFake;

beforeAll(async () => {
  // The email vendor fails every other request (500, retried, then failed); the chat webhook answers after a pause.
  let emailCalls = 0;
  emailFake = await startHttpFake(() => (++emailCalls % 2 === 0 ? { status: 500, body: { errors: [{ message: 'boom' }] } } : { status: 202, body: '' }));
  chatFake = await startHttpFake(async () => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    return { body: { id: 'chat-1' } };
  });
  server = await startTestServer({
    worker: true,
    env: { HERALD_QUEUE_POLL_MS: '20', HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_JOB_ATTEMPTS: '2', HERALD_JOB_BACKOFF_MS: '50' },
  });
  novu = new Novu({ secretKey: server.devKey, serverURL: server.url, retryConfig: { strategy: 'none' } });
  const integrations = [
    { providerId: 'novu', channel: 'in_app' },
    { providerId: 'sendgrid', channel: 'email', credentials: { apiKey: 'SG.key', from: 'noreply@herald.test', baseUrl: emailFake.url } },
    { providerId: 'chat-webhook', channel: 'chat', credentials: { webhookUrl: `${chatFake.url}/hook`, secretKey: 's' } },
    // sms has no integration at all; push has one that is switched off
    { providerId: 'push-webhook', channel: 'push', active: false, credentials: { webhookUrl: `${chatFake.url}/push`, secretKey: 's' } },
  ];
  for (const body of integrations) {
    const response = await server.request('POST', '/v1/integrations', { body: { active: true, check: false, ...body } });
    expect(response.status, response.text).toBe(201);
  }
  const workflows = [
    {
      workflowId: 'states-all-channels',
      steps: [
        { name: 'inbox', type: 'in_app', controlValues: { body: 'Hi {{payload.n}}' } },
        { name: 'wait', type: 'delay', controlValues: { type: 'regular', amount: 1, unit: 'seconds' } },
        { name: 'mail', type: 'email', controlValues: { subject: 'S {{payload.n}}', body: '<p>{{payload.n}}</p>' } },
        { name: 'text', type: 'sms', controlValues: { body: 'sms {{payload.n}}' } },
        { name: 'chat', type: 'chat', controlValues: { body: 'chat {{payload.n}}' } },
        { name: 'push', type: 'push', controlValues: { subject: 'push', body: 'push {{payload.n}}' } },
      ],
    },
    {
      workflowId: 'states-digest',
      steps: [
        { name: 'collect', type: 'digest', controlValues: { type: 'regular', amount: 1, unit: 'seconds' } },
        { name: 'mail', type: 'email', controlValues: { subject: 'Digest', body: '{{steps.collect.eventCount}} events' } },
        { name: 'inbox', type: 'in_app', controlValues: { body: 'digest' } },
      ],
    },
  ];
  for (const workflow of workflows) {
    const response = await server.request('POST', '/v2/workflows', { body: { name: workflow.workflowId, active: true, ...workflow } });
    expect(response.status, response.text).toBe(201);
  }
  for (const n of [0, 1, 2, 3]) {
    await server.request('POST', '/v2/subscribers', { body: { subscriberId: `states-${n}`, email: `states${n}@example.com`, phone: '+15550000000' } });
    await server.request('PUT', `/v1/subscribers/states-${n}/credentials`, { body: { providerId: 'push-webhook', credentials: { deviceTokens: ['t'] } } });
  }
});
afterAll(async () => {
  await server?.close();
  await emailFake?.close();
  await chatFake?.close();
});

describe('@novu/api responses in every job state', () => {
  it('lists and retrieves events at random moments while workflows run; every answer passes the SDK', async () => {
    const seen = { statuses: new Set<string>(), providers: new Map<string, Set<string>>(), calls: 0 };
    const record = (jobs: Array<{ type: string; status: string; providerId: string }> | undefined) => {
      for (const job of jobs ?? []) {
        expect(PROVIDER_IDS.has(job.providerId), `${job.type} job providerId "${job.providerId}"`).toBe(true);
        seen.statuses.add(job.status);
        const byType = seen.providers.get(job.type) ?? new Set<string>();
        byType.add(`${job.status}:${job.providerId}`);
        seen.providers.set(job.type, byType);
      }
    };

    const transactionIds: string[] = [];
    let triggering = true;
    let stopped = false;
    const triggers = (async () => {
      for (let round = 0; round < 6 && !stopped; round++) {
        for (const n of [0, 1, 2, 3]) {
          const workflowId = (round + n) % 3 === 0 ? 'states-digest' : 'states-all-channels';
          const result = await novu.trigger({ workflowId, to: `states-${n}`, payload: { n: round * 4 + n } });
          transactionIds.push(result.result.transactionId!);
        }
        await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 200));
      }
      triggering = false;
    })();

    const deadline = Date.now() + 40_000;
    try {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 60));
        const page = await novu.notifications.list({ limit: 1 + Math.floor(Math.random() * 50), page: 0 });
        seen.calls++;
        for (const event of page.result.data) record(event.jobs as never);
        const pick = page.result.data[Math.floor(Math.random() * page.result.data.length)];
        if (pick?.id) {
          const single = await novu.notifications.retrieve(pick.id);
          seen.calls++;
          record(single.result.jobs as never);
        }
        if (!triggering) {
          const all = await novu.notifications.list({ limit: 50, page: 0 });
          const jobs = all.result.data.flatMap((event) => event.jobs ?? []);
          record(jobs as never);
          if (all.result.data.length >= transactionIds.length && jobs.every((job) => TERMINAL.has(job.status))) break;
        }
        if (Date.now() > deadline) throw new Error(`workflows did not finish; statuses seen: ${[...seen.statuses].join(', ')}`);
      }
    } finally {
      stopped = true;
      await triggers;
    }

    // The run went through the states that matter, and the answers named the planned providers.
    expect(seen.calls).toBeGreaterThan(20);
    for (const status of ['completed', 'failed', 'skipped']) expect(seen.statuses, status).toContain(status);
    expect([...seen.statuses].some((status) => ['pending', 'queued', 'delayed', 'running'].includes(status))).toBe(true);
    const providersOf = (type: string) => new Set([...(seen.providers.get(type) ?? [])].map((entry) => entry.split(':')[1]));
    expect(providersOf('email')).toEqual(new Set(['sendgrid'])); // chosen when the job was created, kept when it failed
    expect(providersOf('sms')).toEqual(new Set(['novu-sms'])); // no integration: the documented fallback
    expect(providersOf('push')).toEqual(new Set(['novu'])); // only an inactive integration
    expect(providersOf('chat')).toEqual(new Set(['chat-webhook']));
    expect(providersOf('in_app')).toEqual(new Set(['novu']));
    expect(providersOf('delay')).toEqual(new Set(['novu']));
    expect(providersOf('digest')).toEqual(new Set(['novu']));
    // an email job is seen before it ran, already naming its provider
    expect([...(seen.providers.get('email') ?? [])].some((entry) => /^(pending|queued):sendgrid$/.test(entry))).toBe(true);
  }, 60_000);
});
