import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/domain/clock.js';
import { SecretBox, parseMasterKey } from '../../src/store/secret-box.js';
import { openRedis } from '../../src/store/redis/connection.js';
import { scaleoutModeRequested, servicesAvailable } from '../helpers/databases.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';
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
 * Scale-out as deployed: two `herald api` processes and one `herald worker` process. The subscriber's socket is held
 * by the first API, triggers and mark-as go to the second, and the in-app message is made by the worker: every
 * event crosses processes through the socket.io Redis emitter and adapter.
 */
const run = scaleoutModeRequested() && (await servicesAvailable(['PostgreSQL']));

describe.skipIf(!run)('Inbox sockets across herald api and herald worker processes', () => {
  let cluster: ScaleoutProcesses;
  let viaSecondApi: HeraldCall;
  let adaToken: string;
  let graceToken: string;
  let linToken: string;
  const sockets: InboxSocket[] = [];

  beforeAll(async () => {
    cluster = await startScaleoutProcesses({ apis: 2, workers: 1 });
    viaSecondApi = heraldCaller(cluster.apis[1]!.url, SCALEOUT_SECRET);
    await createRealtimeWorkflow(viaSecondApi);
    await createSubscriber(viaSecondApi, 'ada', 'Ada');
    await createSubscriber(viaSecondApi, 'grace', 'Grace');
    await createSubscriber(viaSecondApi, 'lin', 'Lin');
    const tokenDeps = { clock: systemClock, sessionSecret: new SecretBox(parseMasterKey(cluster.env.HERALD_ENCRYPTION_KEY!)).sessionSecret, config: loadConfig({}) };
    adaToken = await mintSubscriberToken(viaSecondApi, tokenDeps, 'ada');
    graceToken = await mintSubscriberToken(viaSecondApi, tokenDeps, 'grace');
    linToken = await mintSubscriberToken(viaSecondApi, tokenDeps, 'lin');
  }, 180_000);
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await cluster?.close();
  });

  async function openOnFirstApi(token: string): Promise<InboxSocket> {
    const socket = await openInboxSocket(cluster.apis[0]!.url, token);
    sockets.push(socket);
    return socket;
  }

  it("a worker's in-app message reaches the socket held by another API process, with its counts; another subscriber gets nothing", async () => {
    const ada = await openOnFirstApi(adaToken);
    const grace = await openOnFirstApi(graceToken);
    const transactionId = await triggerFor(viaSecondApi, 'ada', 'x-1');
    const received = await ada.waitFor('notification_received', (p) => p.message.transactionId === transactionId, { timeoutMs: 30_000 });
    expect(received.message).toMatchObject({ transactionId, content: 'Item x-1', cta: { data: { url: 'https://example.com/items/x-1' } }, subscriber: { subscriberId: 'ada' } });
    expect((await ada.waitFor('unread_count_changed', (p) => p.counts.total === 1)).counts.severity).toMatchObject({ none: expect.any(Number) });
    expect((await ada.waitFor('unseen_count_changed')).unseenCount).toBe(1);
    const [stored] = await inAppMessages(viaSecondApi, 'ada');
    expect(stored._id).toBe(received.message._id);

    const mark = ada.events.length;
    const marked = await viaSecondApi('POST', '/v1/subscribers/ada/messages/mark-as', { messageId: stored._id, markAs: 'read' });
    expect(marked.status, marked.text).toBe(201);
    expect((await ada.waitFor('unread_count_changed', () => true, { from: mark })).counts.total).toBe(0);
    expect((await ada.waitFor('unseen_count_changed', () => true, { from: mark })).unseenCount).toBe(0);

    const graceTransaction = await triggerFor(viaSecondApi, 'grace', 'g-1');
    await grace.waitFor('notification_received', (p) => p.message.transactionId === graceTransaction, { timeoutMs: 30_000 });
    expect(grace.events[0]!.name).toBe('notification_received');
    expect(grace.events.filter((e) => e.name === 'notification_received')).toHaveLength(1);
  }, 90_000);

  it("sockets of one subscriber on both API processes each get a worker's delivery and its counts once; the delivery publishes no server-side event, a mark-as one", async () => {
    const subscriberRecordId: string = (await viaSecondApi('GET', '/v2/subscribers/lin')).body.data._id;
    // Every server-side event about Lin (the request channel is received and decoded by every API process).
    const listener = openRedis(cluster.env.REDIS_URL!, 'worker');
    const requests: string[] = [];
    listener.on('pmessageBuffer', (_pattern: Buffer, channel: Buffer, payload: Buffer) => {
      if (channel.toString().includes('socket.io-request#') && payload.includes(subscriberRecordId)) requests.push(channel.toString());
    });
    try {
      await listener.psubscribe('*');
      const onFirst = await openOnFirstApi(linToken);
      const onSecond = await openInboxSocket(cluster.apis[1]!.url, linToken);
      sockets.push(onSecond);
      const transactionId = await triggerFor(viaSecondApi, 'lin', 'l-1');
      for (const socket of [onFirst, onSecond]) {
        await socket.waitFor('notification_received', (p) => p.message.transactionId === transactionId, { timeoutMs: 30_000 });
        expect((await socket.waitFor('unread_count_changed')).counts.total).toBe(1);
        expect((await socket.waitFor('unseen_count_changed')).unseenCount).toBe(1);
      }
      const [stored] = await inAppMessages(viaSecondApi, 'lin');
      const marked = await viaSecondApi('POST', '/v1/subscribers/lin/messages/mark-as', { messageId: stored._id, markAs: 'read' });
      expect(marked.status, marked.text).toBe(201);
      for (const socket of [onFirst, onSecond]) expect((await socket.waitFor('unread_count_changed', (p) => p.counts.total === 0)).counts.total).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      for (const socket of [onFirst, onSecond]) {
        expect(socket.events.map((event) => event.name)).toEqual(['notification_received', 'unread_count_changed', 'unseen_count_changed', 'unread_count_changed', 'unseen_count_changed']);
      }
      expect(requests).toHaveLength(1);
    } finally {
      listener.disconnect();
    }
  }, 90_000);
});
