import { Novu } from '@novu/js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createRealtimeWorkflow, createSubscriber, heraldCaller, inAppMessages, triggerFor, type HeraldCall } from './inbox-socket-helpers.js';

/**
 * The realtime half of the @novu/js client test (the session, lists, counts, actions and preferences are in the
 * inbox tests): the real client, pinned 3.19.2, driven from Node against a real Herald, receives a trigger made
 * after it connected as `notifications.notification_received`, mapped to its Notification.
 */
let server: TestServer;
let call: HeraldCall;
let applicationIdentifier: string;

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
  call = heraldCaller(server.url, server.devKey);
  await createRealtimeWorkflow(call);
  await createSubscriber(call, 'js-ada', 'Ada');
  const me = await call('GET', '/v1/environments/me');
  expect(me.status, me.text).toBe(200);
  applicationIdentifier = me.body.data.identifier;
});
afterAll(async () => {
  await server?.close();
});

describe('@novu/js realtime against Herald', () => {
  it('a trigger made after the client connected arrives as notification_received, and the counts follow', async () => {
    const novu = new Novu({ applicationIdentifier, subscriber: 'js-ada', backendUrl: server.url, socketUrl: server.url });
    const received: any[] = [];
    const unread: any[] = [];
    const connected = new Promise<void>((resolve, reject) => {
      novu.on('socket.connect.resolved', ({ error }: { error?: unknown }) => (error ? reject(error) : resolve()));
    });
    novu.on('notifications.notification_received', ({ result }: { result: unknown }) => void received.push(result));
    novu.on('notifications.unread_count_changed', ({ result }: { result: unknown }) => void unread.push(result));
    try {
      await connected;
      const transactionId = await triggerFor(call, 'js-ada', 'js-1');
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(1);
      const [notification] = received;
      const [stored] = await inAppMessages(call, 'js-ada');
      // The client's own Notification, mapped from Herald's raw message.
      expect(notification).toMatchObject({
        id: stored._id,
        transactionId,
        subject: 'News for Ada',
        body: 'Item js-1',
        isRead: false,
        isSeen: false,
        isArchived: false,
        isSnoozed: false,
        channelType: 'in_app',
        to: { subscriberId: 'js-ada', firstName: 'Ada' },
        redirect: { url: 'https://example.com/items/js-1' },
        primaryAction: { label: 'Open', isCompleted: false },
      });
      await expect.poll(() => unread.at(-1)?.total, { timeout: 15_000 }).toBe(1);

      // The Notification works like one the client listed itself: reading it goes through the Inbox route.
      const read = await notification.read();
      expect(read.error).toBeUndefined();
      await expect.poll(async () => (await inAppMessages(call, 'js-ada'))[0].read, { timeout: 10_000 }).toBe(true);
      await expect.poll(() => unread.at(-1)?.total, { timeout: 15_000 }).toBe(0);
    } finally {
      await novu.socket.disconnect();
    }
  });
});
