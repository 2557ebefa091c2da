import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaleoutModeRequested } from '../helpers/databases.js';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';
import {
  createRealtimeWorkflow,
  createSubscriber,
  heraldCaller,
  inAppMessages,
  mintSubscriberToken,
  openInboxSocket,
  triggerFor,
  type HeraldCall,
  type InboxSocket,
} from './inbox-socket-helpers.js';

/**
 * Snooze end to end: a snoozed message leaves the Inbox feed, comes back when its time passes, and the subscriber's
 * socket receives it again as notification_received. Embedded, time is the injected clock moved by hand. Scale-out,
 * the end of a snooze is a BullMQ delayed job, which runs on Redis time: there the snooze is two seconds of real time.
 */
const scaleout = scaleoutModeRequested();
const clock = scaleout ? undefined : new ManualClock(Date.parse('2026-03-02T09:00:00.000Z'));
let server: TestServer;
let call: HeraldCall;
let token: string;
let socket: InboxSocket | undefined;

beforeAll(async () => {
  server = await startTestServer({ worker: true, clock, env: { HERALD_QUEUE_POLL_MS: '20' } });
  call = heraldCaller(server.url, server.devKey);
  await createRealtimeWorkflow(call);
  await createSubscriber(call, 'sleepy', 'Sam');
  token = await mintSubscriberToken(call, server.deps, 'sleepy');
});
afterAll(async () => {
  socket?.close();
  await server?.close();
});

async function feed(): Promise<any[]> {
  const response = await call('GET', '/v1/inbox/notifications?limit=10&archived=false&snoozed=false', undefined, `Bearer ${token}`);
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

describe('snooze with the clock', () => {
  it('a snoozed message leaves the feed, returns when the time passes, and the socket receives it', async () => {
    const transactionId = await triggerFor(call, 'sleepy', 'later');
    await server.waitForIdle();
    const [stored] = (await inAppMessages(call, 'sleepy')).filter((m) => m.transactionId === transactionId);
    expect((await feed()).map((n) => n.id)).toEqual([stored._id]);

    socket = await openInboxSocket(server.url, token);
    const now = server.deps.clock.now();
    const snoozeUntil = new Date(now + (scaleout ? 2_000 : 3_600_000)).toISOString();
    const snoozed = await call('PATCH', `/v1/inbox/notifications/${stored._id}/snooze`, { snoozeUntil }, `Bearer ${token}`);
    expect(snoozed.status, snoozed.text).toBe(200);
    expect(snoozed.body.data).toMatchObject({ id: stored._id, isSnoozed: true });
    expect(await feed()).toEqual([]);
    // The snooze itself changed the counts: the bell no longer counts the message.
    expect((await socket.waitFor('unread_count_changed', (p) => p.counts.total === 0)).counts.total).toBe(0);
    const mark = socket.events.length;

    if (clock) {
      // Not yet: a minute before the end the message stays away.
      clock.set(Date.parse(snoozeUntil) - 60_000);
      server.wake();
      await server.waitForIdle({ ignoreDelayed: true });
      expect(await feed()).toEqual([]);
      expect(socket.events.slice(mark).some((event) => event.name === 'notification_received')).toBe(false);
      clock.set(Date.parse(snoozeUntil) + 1);
      server.wake();
    }

    const back = await socket.waitFor('notification_received', (p) => p.message._id === stored._id, { from: mark, timeoutMs: 20_000 });
    expect(back.message.snoozedUntil).toBeUndefined();
    // Delivered again: a deliveredAt entry at the end of the snooze (protocol: the message returns to the feed).
    expect(Date.parse(back.message.deliveredAt.at(-1))).toBeGreaterThanOrEqual(Date.parse(snoozeUntil));
    expect((await socket.waitFor('unread_count_changed', (p) => p.counts.total === 1, { from: mark })).counts.total).toBe(1);
    const returned = await feed();
    expect(returned.map((n) => n.id)).toEqual([stored._id]);
    expect(returned[0].isSnoozed).toBe(false);
  }, 60_000);
});
