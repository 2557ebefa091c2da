import { createHmac } from 'node:crypto';
import { io, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaleoutModeRequested, servicesAvailable } from '../helpers/databases.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';
import { createRealtimeWorkflow, createSubscriber, heraldCaller, triggerFor, type HeraldCall } from './inbox-socket-helpers.js';

/**
 * The older widget scaled out as deployed: two `herald api` processes and one `herald worker`. The session is made on
 * the first API, the socket (token in the handshake `auth`, as @novu/notification-center sends it) is held by the
 * first API, the widget's reads and marks go to the second, and the in-app message is made by the worker: any API
 * process answers, and every event crosses processes through the Redis fan-out.
 */
const run = scaleoutModeRequested() && (await servicesAvailable(['PostgreSQL']));

describe.skipIf(!run)('the widget across herald api and herald worker processes', () => {
  let cluster: ScaleoutProcesses;
  let viaSecondApi: HeraldCall;
  let token: string;
  let socket: Socket | undefined;

  beforeAll(async () => {
    cluster = await startScaleoutProcesses({ apis: 2, workers: 1 });
    viaSecondApi = heraldCaller(cluster.apis[1]!.url, SCALEOUT_SECRET);
    const integration = await viaSecondApi('POST', '/v1/integrations', { providerId: 'novu', channel: 'in_app', name: 'In-app', credentials: { hmac: true }, active: true });
    expect(integration.status, integration.text).toBe(201);
    await createRealtimeWorkflow(viaSecondApi);
    await createSubscriber(viaSecondApi, 'ada', 'Ada');
    const identifier = (await viaSecondApi('GET', '/v1/environments/me')).body.data.identifier;
    const session = await fetch(`${cluster.apis[0]!.url}/v1/widgets/session/initialize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ applicationIdentifier: identifier, subscriberId: 'ada', hmacHash: createHmac('sha256', SCALEOUT_SECRET).update('ada').digest('hex') }),
    });
    expect(session.status).toBe(201);
    token = (await session.json()).data.token;
  }, 180_000);
  afterAll(async () => {
    socket?.close();
    await cluster?.close();
  });

  it("a worker's message reaches the widget socket on another API process; reads and marks on the second API; counts follow", async () => {
    socket = io(cluster.apis[0]!.url, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
    const events: Array<{ name: string; payload: any }> = [];
    socket.onAny((name: string, payload: unknown) => events.push({ name, payload }));
    await new Promise<void>((resolve, reject) => {
      socket!.once('connect', () => resolve());
      socket!.once('connect_error', reject);
    });
    const waitFor = async (name: string, matches: (payload: any) => boolean = () => true, from = 0) => {
      await expect.poll(() => events.slice(from).some((event) => event.name === name && matches(event.payload)), { timeout: 30_000 }).toBe(true);
      return events.slice(from).find((event) => event.name === name && matches(event.payload))!.payload;
    };

    const transactionId = await triggerFor(viaSecondApi, 'ada', 'w-1');
    const received = await waitFor('notification_received', (p) => p.message.transactionId === transactionId);
    expect(received.message).toMatchObject({ content: 'Item w-1', read: false, seen: false, subscriber: { subscriberId: 'ada' } });
    expect(await waitFor('unread_count_changed', (p) => p.unreadCount === 1)).toMatchObject({ unreadCount: 1, hasMore: false, counts: { total: 1 } });
    expect(await waitFor('unseen_count_changed', (p) => p.unseenCount === 1)).toEqual({ unseenCount: 1, hasMore: false });

    const widget = heraldCaller(cluster.apis[1]!.url, SCALEOUT_SECRET);
    const bearer = `Bearer ${token}`;
    const feed = await widget('GET', '/v1/widgets/notifications/feed?page=0', undefined, bearer);
    expect(feed.status, feed.text).toBe(200);
    expect(feed.body.data.map((m: { _id: string }) => m._id)).toEqual([received.message._id]);
    const mark = events.length;
    const marked = await widget('POST', '/v1/widgets/messages/markAs', { messageId: received.message._id, mark: { seen: true, read: true } }, bearer);
    expect(marked.status, marked.text).toBe(201);
    expect(await waitFor('unread_count_changed', () => true, mark)).toMatchObject({ unreadCount: 0, counts: { total: 0 } });
    expect(await waitFor('unseen_count_changed', () => true, mark)).toEqual({ unseenCount: 0, hasMore: false });
    expect((await widget('GET', '/v1/widgets/notifications/unread', undefined, bearer)).body).toEqual({ data: { count: 0 } });
  }, 90_000);
});
