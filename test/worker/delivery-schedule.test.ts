import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpFake, type SmtpFake } from '../fakes/smtp-fake.js';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';
import { createWorkflow, eventsOf, messagesOf, trigger } from './engine-helpers.js';
import { createIntegration, createSubscriber, deliveryEnv } from './delivery/delivery-helpers.js';

/**
 * Delivery schedules (quiet hours) end to end with the injected clock: outside the subscriber's window an email step
 * is held and sent when the window opens (default), or skipped (HERALD_SCHEDULE_OUTSIDE_WINDOW=skip); in-app steps
 * and critical workflows go at once. As in test/worker/steps.test.ts, scale-out mode keeps PostgreSQL but clears
 * REDIS_URL: BullMQ schedules by Redis time, which a test clock cannot move.
 */
const MONDAY_10_UTC = '2026-01-05T10:00:00.000Z'; // 05:00 in New York
const OPENS = '2026-01-05T14:00:00.000Z'; // 09:00 in New York
const nineToFive = { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] };
const schedule = { isEnabled: true, weeklySchedule: { monday: nineToFive, tuesday: nineToFive, wednesday: nineToFive, thursday: nineToFive, friday: nineToFive } };
const steps = [
  { name: 'inbox', type: 'in_app', controlValues: { body: 'Hello' } },
  { name: 'mail', type: 'email', controlValues: { subject: 'Mail {{ payload.n }}', body: '<p>Hello</p>' } },
];

interface Setup {
  server: TestServer;
  clock: ManualClock;
}

let smtp: SmtpFake;
let defer: Setup;
let skip: Setup;

async function setUp(mode?: 'skip'): Promise<Setup> {
  const clock = new ManualClock(Date.parse(MONDAY_10_UTC));
  const env = deliveryEnv({ REDIS_URL: '', ...(mode ? { HERALD_SCHEDULE_OUTSIDE_WINDOW: mode } : {}) });
  const server = await startTestServer({ clock, worker: true, env });
  await createIntegration(server, { providerId: 'nodemailer', identifier: 'smtp', credentials: { host: '127.0.0.1', port: String(smtp.port), from: 'noreply@herald.test' } });
  await createWorkflow(server, { workflowId: 'quiet-news', active: true, steps });
  await createWorkflow(server, { workflowId: 'quiet-critical', active: true, critical: true, steps });
  return { server, clock };
}

beforeAll(async () => {
  smtp = await startSmtpFake();
  defer = await setUp();
  skip = await setUp('skip');
});
afterAll(async () => {
  await defer?.server.close();
  await skip?.server.close();
  await smtp?.close();
});

let counter = 0;

async function subscriberWithSchedule({ server }: Setup, subscriberId: string): Promise<void> {
  await createSubscriber(server, { subscriberId, email: `${subscriberId}@example.com`, timezone: 'America/New_York' });
  const response = await server.request('PATCH', `/v2/subscribers/${subscriberId}/preferences`, { body: { schedule } });
  expect(response.status, response.text).toBe(200);
}

/** Triggers and waits for every job due now; answers the transaction, its subject and a reader of its state. */
async function send({ server }: Setup, workflowId: string, subscriberId: string) {
  const n = ++counter;
  const response = await trigger(server, { name: workflowId, to: subscriberId, payload: { n } });
  expect(response.status, response.text).toBe(201);
  const { transactionId } = response.body.data;
  await server.waitForIdle({ ignoreDelayed: true });
  const state = async () => {
    const [event] = await eventsOf(server, transactionId);
    const messages = await messagesOf(server, transactionId);
    return {
      jobs: event.jobs.map((job: any) => job.status),
      emailDetails: event.jobs[1].executionDetails.map((detail: any) => `${detail.status}: ${detail.detail}`),
      channels: messages.map((message: any) => message.channel).sort(),
      mails: smtp.mails.filter((mail) => mail.parsed.subject === `Mail ${n}`).length,
    };
  };
  return state;
}

async function advanceTo({ server, clock }: Setup, iso: string): Promise<void> {
  clock.set(iso);
  server.wake();
  await server.waitForIdle({ ignoreDelayed: true });
}

describe('defer (default): outside the window the email is held until it opens', () => {
  it('in-app at once; the email step is delayed with a detail saying why and until when, then sent at 09:00 New York', async () => {
    await subscriberWithSchedule(defer, 'quiet-1');
    const state = await send(defer, 'quiet-news', 'quiet-1');
    let now = await state();
    expect(now.jobs).toEqual(['completed', 'delayed']);
    expect(now.emailDetails.at(-1)).toBe(`Pending: Held until ${OPENS}: outside the subscriber's delivery schedule (America/New_York)`);
    expect(now.channels).toEqual(['in_app']);
    expect(now.mails).toBe(0);

    await advanceTo(defer, '2026-01-05T13:59:00.000Z');
    now = await state();
    expect(now.jobs).toEqual(['completed', 'delayed']);
    expect(now.mails).toBe(0);

    await advanceTo(defer, OPENS);
    now = await state();
    expect(now.jobs).toEqual(['completed', 'completed']);
    expect(now.channels).toEqual(['email', 'in_app']);
    expect(now.mails).toBe(1);
    expect(now.emailDetails.at(-1)).toMatch(/^Success: Message sent via nodemailer/);
  });

  it('inside the window the email goes at once', async () => {
    await subscriberWithSchedule(defer, 'quiet-2');
    defer.clock.set('2026-01-06T15:00:00.000Z'); // Tuesday 10:00 in New York
    const now = await (await send(defer, 'quiet-news', 'quiet-2'))();
    expect(now.jobs).toEqual(['completed', 'completed']);
    expect(now.mails).toBe(1);
  });

  it('a critical workflow is sent at once outside the window', async () => {
    await subscriberWithSchedule(defer, 'quiet-3');
    defer.clock.set('2026-01-10T12:00:00.000Z'); // Saturday
    const now = await (await send(defer, 'quiet-critical', 'quiet-3'))();
    expect(now.jobs).toEqual(['completed', 'completed']);
    expect(now.mails).toBe(1);
  });

  it('a held email is checked again when the window opens: an opt-out made meanwhile skips it', async () => {
    await subscriberWithSchedule(defer, 'quiet-4');
    defer.clock.set('2026-01-07T02:00:00.000Z'); // Tuesday 21:00 in New York: opens Wednesday 09:00 = 14:00Z
    const state = await send(defer, 'quiet-news', 'quiet-4');
    expect((await state()).emailDetails.at(-1)).toBe("Pending: Held until 2026-01-07T14:00:00.000Z: outside the subscriber's delivery schedule (America/New_York)");
    const optOut = await defer.server.request('PATCH', '/v2/subscribers/quiet-4/preferences', { body: { channels: { email: false } } });
    expect(optOut.status).toBe(200);
    await advanceTo(defer, '2026-01-07T14:00:00.000Z');
    const now = await state();
    expect(now.jobs).toEqual(['completed', 'skipped']);
    expect(now.emailDetails.at(-1)).toBe("Success: Step skipped: the email channel is turned off in the subscriber's global preferences");
    expect(now.mails).toBe(0);
  });
});

describe('skip (HERALD_SCHEDULE_OUTSIDE_WINDOW=skip): Novu behaviour', () => {
  it('outside the window the email is skipped with a detail; in-app arrives at once; nothing is sent later', async () => {
    await subscriberWithSchedule(skip, 'quiet-skip');
    const state = await send(skip, 'quiet-news', 'quiet-skip');
    let now = await state();
    expect(now.jobs).toEqual(['completed', 'skipped']);
    expect(now.emailDetails.at(-1)).toBe(`Success: Step skipped: outside the subscriber's delivery schedule (America/New_York); the window next opens at ${OPENS}`);
    expect(now.channels).toEqual(['in_app']);
    await advanceTo(skip, OPENS);
    now = await state();
    expect(now.jobs).toEqual(['completed', 'skipped']);
    expect(now.mails).toBe(0);
  });
});
