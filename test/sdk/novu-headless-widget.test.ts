import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeadlessService } from '@novu/headless';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The real @novu/headless 2.6.6 (the older widget's headless client, over @novu/client 2.6.6 and socket.io-client
 * 4.7.2 with the token in the handshake query) against a real Herald over HTTP and its socket: the session with HMAC,
 * the feed's shape, the counts, marking, the socket's events, feeds from the in-app step, preferences. Results are
 * read back through the server-side API. HERALD_TEST_MODE=scaleout: PostgreSQL, BullMQ, the Redis fan-out.
 */
const SUBSCRIBER = 'headless-user';

type Listener = { onSuccess: (value?: any) => void; onError: (error: unknown) => void; listener: () => void };

/** The client's callback style as a promise. */
function call<T>(start: (callbacks: Listener) => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    void start({ onSuccess: (value) => resolve(value as T), onError: reject, listener: () => undefined });
  });
}

describe('@novu/headless against Herald (/v1/widgets and the socket)', () => {
  let server: TestServer;
  let headless: HeadlessService;
  let identifier: string;
  let workflowId: string;

  const trigger = async (n: number) => {
    const response = await server.request('POST', '/v1/events/trigger', { body: { name: 'headless-news', to: { subscriberId: SUBSCRIBER, firstName: 'Hedy' }, payload: { n } } });
    expect(response.status, response.text).toBe(201);
  };
  const serverMessages = async () => {
    const response = await server.request('GET', `/v1/messages?subscriberId=${SUBSCRIBER}&channel=in_app&limit=100`);
    expect(response.status).toBe(200);
    return response.body.data as Array<{ _id: string; content: string; read: boolean; seen: boolean }>;
  };

  beforeAll(async () => {
    server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
    identifier = (await server.request('GET', '/v1/environments/me')).body.data.identifier;
    expect((await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', name: 'In-app', credentials: { hmac: true }, active: true } })).status).toBe(201);
    const workflow = await server.request('POST', '/v2/workflows', {
      body: {
        workflowId: 'headless-news',
        name: 'Headless news',
        active: true,
        steps: [
          { name: 'bell', type: 'in_app', controlValues: { body: 'News {{ payload.n }} for {{ subscriber.firstName }}', feedIdentifier: 'news' } },
          { name: 'mail', type: 'email', controlValues: { subject: 'News', body: 'News' } },
        ],
      },
    });
    expect(workflow.status, workflow.text).toBe(201);
    workflowId = workflow.body.data._id;
    // One at a time, so the newest-first order below is the trigger order.
    for (const n of [1, 2, 3]) {
      await trigger(n);
      await server.waitForIdle();
    }
    headless = new HeadlessService({
      backendUrl: server.url,
      socketUrl: server.url,
      applicationIdentifier: identifier,
      subscriberId: SUBSCRIBER,
      subscriberHash: createHmac('sha256', server.devKey).update(SUBSCRIBER).digest('hex'),
      config: { retry: 0 },
    });
  }, 60_000);
  afterAll(async () => {
    (headless as unknown as { socket?: { disconnect(): void } })?.socket?.disconnect();
    await server?.close();
  });

  it('a wrong hash is refused', async () => {
    const wrong = new HeadlessService({ backendUrl: server.url, socketUrl: server.url, applicationIdentifier: identifier, subscriberId: SUBSCRIBER, subscriberHash: 'f'.repeat(64), config: { retry: 0 } });
    const error = await call((callbacks) => wrong.initializeSession(callbacks)).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).toBe('HTTP error! Status: 400, Message: Please provide a valid HMAC hash');
  });

  it('starts the session, reads the feed with its shape, and the counts', async () => {
    const session = await call<{ token: string; profile: { _id: string; firstName: string } }>((callbacks) => headless.initializeSession(callbacks));
    expect(session.token).toEqual(expect.any(String));
    expect(session.profile).toMatchObject({ _id: expect.any(String), firstName: 'Hedy' });

    const feed = await call<any>((callbacks) => headless.fetchNotifications({ page: 0, ...callbacks }));
    expect(feed).toMatchObject({ totalCount: 3, hasMore: false, pageSize: 10, page: 0 });
    expect(feed.data.map((m: { content: string }) => m.content)).toEqual(['News 3 for Hedy', 'News 2 for Hedy', 'News 1 for Hedy']);
    expect(feed.data[0]).toMatchObject({
      _id: expect.any(String),
      _subscriberId: session.profile._id,
      _feedId: 'news',
      channel: 'in_app',
      templateIdentifier: 'headless-news',
      read: false,
      seen: false,
      payload: { n: 3 },
      cta: expect.any(Object),
      subscriber: { subscriberId: SUBSCRIBER, firstName: 'Hedy' },
      createdAt: expect.any(String),
    });
    // The in-app step's feed filters the feed; another feed shows nothing.
    const news = await call<any>((callbacks) => headless.fetchNotifications({ page: 0, storeId: 'news', query: { feedIdentifier: 'news' }, ...callbacks }));
    expect(news.data).toHaveLength(3);
    const other = await call<any>((callbacks) => headless.fetchNotifications({ page: 0, storeId: 'other', query: { feedIdentifier: 'billing' }, ...callbacks }));
    expect(other.data).toEqual([]);
    const firstPage = await call<any>((callbacks) => headless.fetchNotifications({ page: 0, storeId: 'small', query: { limit: 2 } as never, ...callbacks }));
    expect(firstPage).toMatchObject({ totalCount: 2, hasMore: true, pageSize: 2 });

    expect(await call((callbacks) => headless.fetchUnseenCount(callbacks))).toEqual({ count: 3 });
    expect(await call((callbacks) => headless.fetchUnreadCount(callbacks))).toEqual({ count: 3 });
    const organization = await call<any>((callbacks) => headless.fetchOrganization(callbacks));
    expect(organization).toMatchObject({ _id: expect.any(String), name: expect.any(String) });
  });

  it('marks read, seen, and all read; the server-side API shows each', async () => {
    const [third, second, first] = await serverMessages();
    const read = await call<any[]>((callbacks) => headless.markNotificationsAsRead({ messageId: third._id, ...callbacks }));
    expect(read).toEqual([expect.objectContaining({ _id: third._id, read: true, seen: true })]);
    expect((await serverMessages()).find((m) => m._id === third._id)).toMatchObject({ read: true, seen: true });

    const seen = await call<any[]>((callbacks) => headless.markNotificationsAsSeen({ messageId: [second._id], ...callbacks }));
    expect(seen).toEqual([expect.objectContaining({ _id: second._id, seen: true })]);
    expect((await serverMessages()).find((m) => m._id === second._id)).toMatchObject({ read: false, seen: true });

    const unread = await call<any[]>((callbacks) => headless.markNotificationsAs({ messageId: third._id, mark: { read: false }, ...callbacks }));
    expect(unread[0]).toMatchObject({ _id: third._id, read: false });

    expect(await call<number>((callbacks) => headless.markAllMessagesAsRead(callbacks))).toBe(3);
    expect((await serverMessages()).every((m) => m.read && m.seen)).toBe(true);
    expect(first._id).toBeTruthy();
  });

  it('hears a new message (listenNotificationReceive) and the counts (listenUnseenCountChange, listenUnreadCountChange) on its socket', async () => {
    const received: any[] = [];
    const unseen: number[] = [];
    const unread: number[] = [];
    headless.listenNotificationReceive({ listener: (message) => received.push(message) });
    headless.listenUnseenCountChange({ listener: (count) => unseen.push(count) });
    headless.listenUnreadCountChange({ listener: (count) => unread.push(count) });
    const socket = (headless as unknown as { socket: { connected: boolean } }).socket;
    await expect.poll(() => socket.connected, { timeout: 10_000 }).toBe(true);

    await trigger(4);
    await expect.poll(() => received.length, { timeout: 20_000 }).toBe(1);
    expect(received[0]).toMatchObject({ _id: expect.any(String), content: 'News 4 for Hedy', channel: 'in_app', read: false, seen: false, _feedId: 'news', templateIdentifier: 'headless-news' });
    await expect.poll(() => unseen.at(-1), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => unread.at(-1), { timeout: 10_000 }).toBe(1);

    // A mark through the client sends the new counts.
    await call((callbacks) => headless.markNotificationsAsRead({ messageId: received[0]._id, ...callbacks }));
    await expect.poll(() => unread.at(-1), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => unseen.at(-1), { timeout: 10_000 }).toBe(0);
  });

  it('reads and writes preferences: a channel switch by the workflow’s _id persists', async () => {
    const rows = await call<any[]>((callbacks) => headless.fetchUserPreferences(callbacks));
    const row = rows.find((r) => r.template._id === workflowId);
    expect(row).toMatchObject({ template: { name: 'Headless news', critical: false }, preference: { enabled: true, channels: { in_app: true, email: true } } });
    const updated = await call<any>((callbacks) => headless.updateUserPreferences({ templateId: workflowId, channelType: 'email', checked: false, ...callbacks }));
    expect(updated).toMatchObject({ template: { _id: workflowId }, preference: { channels: { email: false } } });
    const server1 = await server.request('GET', `/v1/subscribers/${SUBSCRIBER}/preferences`);
    expect(server1.body.data.find((r: any) => r.template._id === workflowId).preference.channels).toEqual({ in_app: true, email: false });
    const global = await call<any[]>((callbacks) => headless.fetchUserGlobalPreferences(callbacks));
    expect(global[0].preference).toMatchObject({ enabled: true });
  });

  it('removes one message and then all of them', async () => {
    const [newest] = await serverMessages();
    const removed = await call<any>((callbacks) => headless.removeNotification({ messageId: newest._id, ...callbacks }));
    expect(removed).toMatchObject({ _id: newest._id, deleted: true });
    expect((await serverMessages()).some((m) => m._id === newest._id)).toBe(false);
    await call((callbacks) => headless.removeAllNotifications(callbacks));
    expect(await serverMessages()).toEqual([]);
  });
});
