import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';
import { CustomSteps } from '../../src/worker/custom-steps.js';
import { createWorkflow, detailTexts, eventsOf, messagesOf, trigger } from './engine-helpers.js';

const MINUTE = 60_000;
const clock = new ManualClock();
const customCalls: unknown[] = [];
let server: TestServer;
let hook: Server;
let hookUrl: string;
const hookRequests: Array<{ method?: string; url?: string; body: string; headers: Record<string, unknown> }> = [];

beforeAll(async () => {
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      hookRequests.push({ method: req.method, url: req.url, body, headers: req.headers });
      res.statusCode = req.url?.includes('fail') ? 500 : 200;
      res.end(JSON.stringify({ ok: !req.url?.includes('fail') }));
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;
  const customSteps = new CustomSteps().register('score', async (input) => {
    customCalls.push(input.payload);
    return { score: 42 };
  });
  // The manual clock drives delays through the SQL queue. In scale-out mode the store is still PostgreSQL,
  // but REDIS_URL is cleared: BullMQ schedules by Redis time, which no test clock can move (BullMQ's own delay
  // and retry timing is covered by test/queue/contract).
  server = await startTestServer({
    clock,
    worker: { customSteps },
    env: { HERALD_QUEUE_POLL_MS: '20', HERALD_OUTBOUND_ALLOW: '127.0.0.1', HERALD_JOB_ATTEMPTS: '1', REDIS_URL: '' },
  });
});
afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => hook?.close(resolve));
});

const inbox = (body = 'Hello') => ({ name: 'inbox', type: 'in_app', controlValues: { body } });

async function settle(): Promise<void> {
  await server.waitForIdle({ ignoreDelayed: true });
}

async function advance(ms: number): Promise<void> {
  clock.advance(ms);
  server.wake();
  await settle();
}

describe('delay', () => {
  it('regular: the next step runs only once the delay has passed', async () => {
    await createWorkflow(server, { workflowId: 'delay-regular', steps: [{ name: 'wait', type: 'delay', controlValues: { type: 'regular', amount: 1, unit: 'hours' } }, inbox()] });
    const { body } = await trigger(server, { name: 'delay-regular', to: 'd-1' });
    await settle();
    let [event] = await eventsOf(server, body.data.transactionId);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['delayed', 'pending']);
    expect(detailTexts(event.jobs[0]).at(-1)).toBe(`Pending: Delayed until ${new Date(clock.now() + 60 * MINUTE).toISOString()}`);
    await advance(59 * MINUTE);
    expect(await messagesOf(server, body.data.transactionId)).toHaveLength(0);
    await advance(MINUTE);
    [event] = await eventsOf(server, body.data.transactionId);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['completed', 'completed']);
    expect(detailTexts(event.jobs[0]).at(-1)).toBe('Success: Delay finished');
    expect(await messagesOf(server, body.data.transactionId)).toHaveLength(1);
  });

  it('scheduled: waits until the date at delayPath in the payload', async () => {
    await createWorkflow(server, { workflowId: 'delay-scheduled', steps: [{ name: 'wait', type: 'delay', controlValues: { type: 'scheduled', delayPath: 'sendAt' } }, inbox()] });
    const sendAt = new Date(clock.now() + 30 * MINUTE).toISOString();
    const { body } = await trigger(server, { name: 'delay-scheduled', to: 'd-2', payload: { sendAt } });
    await settle();
    expect(await messagesOf(server, body.data.transactionId)).toHaveLength(0);
    await advance(30 * MINUTE);
    expect(await messagesOf(server, body.data.transactionId)).toHaveLength(1);
  });
});

describe('digest', () => {
  const digestInbox = inbox('{{ steps.digest.eventCount }} events: {% for e in steps.digest.events %}{{ e.n }} {% endfor %}');

  it('regular: later events merge into the first, whose next step sees them all', async () => {
    await createWorkflow(server, { workflowId: 'digest-regular', steps: [{ name: 'digest', type: 'digest', controlValues: { type: 'regular', amount: 10, unit: 'minutes' } }, digestInbox] });
    const transactions: string[] = [];
    for (const n of [1, 2, 3]) {
      const { body } = await trigger(server, { name: 'digest-regular', to: 'g-1', payload: { n } });
      transactions.push(body.data.transactionId);
      await settle();
    }
    const [first] = await eventsOf(server, transactions[0]);
    expect(first.jobs[0].status).toBe('delayed');
    for (const tx of transactions.slice(1)) {
      const [event] = await eventsOf(server, tx);
      expect(event.jobs.map((job: any) => job.status)).toEqual(['merged', 'merged']);
      expect(event._digestedNotificationId).toBe(first._id);
    }
    await advance(10 * MINUTE);
    const messages = await messagesOf(server, transactions[0]);
    expect(messages.map((message) => message.content)).toEqual(['3 events: 1 2 3 ']);
    const [closed] = await eventsOf(server, transactions[0]);
    expect(closed.jobs[0].digest).toMatchObject({ type: 'regular', amount: 10, unit: 'minutes', events: [{ n: 1 }, { n: 2 }, { n: 3 }] });
  });

  it('regular, triggered concurrently: one event opens the digest and every other merges into it', async () => {
    await createWorkflow(server, { workflowId: 'digest-concurrent', steps: [{ name: 'digest', type: 'digest', controlValues: { type: 'regular', amount: 10, unit: 'minutes' } }, digestInbox] });
    // Created first, so that the concurrent triggers race on the digest and not on creating the subscriber.
    await trigger(server, { name: 'digest-regular', to: 'g-concurrent', payload: { n: 0 } });
    await settle();
    const responses = await Promise.all(Array.from({ length: 20 }, (_, n) => trigger(server, { name: 'digest-concurrent', to: 'g-concurrent', payload: { n } })));
    await settle();
    const events = (await Promise.all(responses.map(({ body }) => eventsOf(server, body.data.transactionId)))).flat();
    const firstStatuses = events.map((event) => event.jobs[0].status).sort();
    expect(firstStatuses).toEqual(['delayed', ...Array(19).fill('merged')]);
    await advance(10 * MINUTE);
    const delivered = (await Promise.all(responses.map(({ body }) => messagesOf(server, body.data.transactionId)))).flat();
    expect(delivered).toHaveLength(1);
    expect(delivered[0].content).toMatch(/^20 events: /);
  });

  it('backoff: a lone event goes at once; one soon after another opens a window', async () => {
    await createWorkflow(server, {
      workflowId: 'digest-backoff',
      steps: [{ name: 'digest', type: 'digest', controlValues: { type: 'backoff', amount: 5, unit: 'minutes', backoffAmount: 1, backoffUnit: 'minutes' } }, digestInbox],
    });
    const first = await trigger(server, { name: 'digest-backoff', to: 'g-2', payload: { n: 1 } });
    await settle();
    expect((await messagesOf(server, first.body.data.transactionId)).map((m) => m.content)).toEqual(['1 events: 1 ']);
    clock.advance(30_000);
    const second = await trigger(server, { name: 'digest-backoff', to: 'g-2', payload: { n: 2 } });
    await settle();
    const third = await trigger(server, { name: 'digest-backoff', to: 'g-2', payload: { n: 3 } });
    await settle();
    expect(await messagesOf(server, second.body.data.transactionId)).toHaveLength(0);
    await advance(5 * MINUTE);
    expect((await messagesOf(server, second.body.data.transactionId)).map((m) => m.content)).toEqual(['2 events: 2 3 ']);
    expect(await messagesOf(server, third.body.data.transactionId)).toHaveLength(0);
  });

  it('timed: events wait for the next atTime', async () => {
    clock.set('2026-01-06T10:00:00.000Z');
    await createWorkflow(server, { workflowId: 'digest-timed', steps: [{ name: 'digest', type: 'digest', controlValues: { type: 'timed', timed: { atTime: '12:00' } } }, digestInbox] });
    const first = await trigger(server, { name: 'digest-timed', to: 'g-3', payload: { n: 1 } });
    await settle();
    await trigger(server, { name: 'digest-timed', to: 'g-3', payload: { n: 2 } });
    await settle();
    const [event] = await eventsOf(server, first.body.data.transactionId);
    expect(detailTexts(event.jobs[0]).at(-1)).toBe('Pending: Digesting events until 2026-01-06T12:00:00.000Z');
    await advance(2 * 60 * MINUTE);
    expect((await messagesOf(server, first.body.data.transactionId)).map((m) => m.content)).toEqual(['2 events: 1 2 ']);
  });
});

describe('throttle', () => {
  it('lets threshold events through per window and skips the rest with their later steps', async () => {
    await createWorkflow(server, { workflowId: 'throttled', steps: [{ name: 'throttle', type: 'throttle', controlValues: { amount: 1, unit: 'hours', threshold: 2 } }, inbox()] });
    const transactions: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { body } = await trigger(server, { name: 'throttled', to: 'th-1' });
      transactions.push(body.data.transactionId);
      await settle();
    }
    const statuses = [];
    for (const tx of transactions) statuses.push((await eventsOf(server, tx))[0].jobs.map((job: any) => job.status));
    expect(statuses).toEqual([['completed', 'completed'], ['completed', 'completed'], ['skipped', 'skipped']]);
    const [throttled] = await eventsOf(server, transactions[2]);
    expect(detailTexts(throttled.jobs[0]).at(-1)).toBe('Warning: Throttled: more than 2 per 1 hours');
    await advance(60 * MINUTE);
    const { body } = await trigger(server, { name: 'throttled', to: 'th-1' });
    await settle();
    expect(await messagesOf(server, body.data.transactionId)).toHaveLength(1);
  });
});

describe('cancel', () => {
  it('cancels the steps that have not run yet', async () => {
    await createWorkflow(server, { workflowId: 'cancel-me', steps: [{ name: 'wait', type: 'delay', controlValues: { type: 'regular', amount: 1, unit: 'hours' } }, inbox()] });
    await trigger(server, { name: 'cancel-me', to: 'c-1', transactionId: 'tx-cancel' });
    await settle();
    const canceled = await server.request('DELETE', '/v1/events/trigger/tx-cancel');
    expect(canceled.status, canceled.text).toBe(200);
    expect(canceled.body).toEqual({ data: true });
    await advance(61 * MINUTE);
    const [event] = await eventsOf(server, 'tx-cancel');
    expect(event.jobs.map((job: any) => job.status)).toEqual(['canceled', 'canceled']);
    expect(await messagesOf(server, 'tx-cancel')).toHaveLength(0);
    expect((await server.request('DELETE', '/v1/events/trigger/tx-cancel')).body).toEqual({ data: false });
  });
});

describe('skips, warnings and action steps', () => {
  it('skips a step whose filters fail and a channel turned off, and warns when no integration is active', async () => {
    await createWorkflow(server, {
      workflowId: 'gated',
      preferences: { channels: { sms: { enabled: false } } },
      steps: [
        { ...inbox(), filters: [{ isNegated: false, type: 'GROUP', value: 'AND', children: [{ field: 'vip', value: 'true', operator: 'EQUAL', on: 'payload' }] }] },
        { name: 'mail', type: 'email', controlValues: { subject: 'S', body: 'B' } },
        { name: 'text', type: 'sms', controlValues: { body: 'B' } },
      ],
    });
    const { body } = await trigger(server, { name: 'gated', to: { subscriberId: 'gate-1', email: 'g@example.com' }, payload: { vip: 'false' } });
    await settle();
    const [event] = await eventsOf(server, body.data.transactionId);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(detailTexts(event.jobs[0]).at(-1)).toMatch(/^Success: Step skipped: filters did not match/);
    expect(detailTexts(event.jobs[1]).at(-1)).toBe('Warning: no active integration for channel email');
    expect(detailTexts(event.jobs[2]).at(-1)).toBe("Success: Step skipped: the sms channel is turned off in the workflow's preferences");
    expect(await messagesOf(server, body.data.transactionId)).toHaveLength(0);
  });

  it('runs http_request and custom steps and stops on a failing request when shouldStopOnFail', async () => {
    await createWorkflow(server, {
      workflowId: 'actions',
      steps: [
        { name: 'score', type: 'custom', controlValues: { handler: 'score' } },
        { name: 'call', type: 'http_request', controlValues: { method: 'POST', url: `${hookUrl}/ok/{{ payload.id }}`, headers: { 'x-id': '{{ payload.id }}' }, body: { who: '{{ subscriber.subscriberId }}' } } },
        { name: 'broken', type: 'http_request', shouldStopOnFail: true, controlValues: { url: `${hookUrl}/fail` } },
        inbox(),
      ],
    });
    const { body } = await trigger(server, { name: 'actions', to: 'act-1', payload: { id: 'p7' } });
    await settle();
    const [event] = await eventsOf(server, body.data.transactionId);
    expect(event.jobs.map((job: any) => job.status)).toEqual(['completed', 'completed', 'failed', 'skipped']);
    expect(customCalls).toContainEqual({ id: 'p7' });
    expect(event.jobs[0].executionDetails.at(-1).raw).toBe('{"score":42}');
    const ok = hookRequests.find((request) => request.url === '/ok/p7');
    expect(ok).toMatchObject({ method: 'POST', body: '{"who":"act-1"}' });
    expect(ok?.headers['x-id']).toBe('p7');
    expect(JSON.parse(event.jobs[1].executionDetails.at(-1).raw)).toEqual({ status: 200, body: '{"ok":true}' });
    expect(detailTexts(event.jobs[2]).at(-1)).toBe(`Failed: HTTP GET ${hookUrl}/fail answered 500`);
    expect(await messagesOf(server, body.data.transactionId)).toHaveLength(0);
  });
});
