import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import {
  createRealtimeWorkflow,
  createSubscriber,
  heraldCaller,
  inAppMessages,
  mintSubscriberToken,
  openInboxSocket,
  refusedHandshake,
  triggerFor,
  type HeraldCall,
  type InboxSocket,
} from './inbox-socket-helpers.js';

/**
 * The Inbox socket on the API's own port, through real sockets: embedded (in-process hub), and with
 * HERALD_TEST_MODE=scaleout over PostgreSQL and Redis (events travel through the socket.io Redis emitter and adapter
 * even within one process). The separate-process case is inbox-sockets-processes.test.ts.
 */
let server: TestServer;
let call: HeraldCall;
let adaToken: string;
let graceToken: string;
const sockets: InboxSocket[] = [];

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
  call = heraldCaller(server.url, server.devKey);
  await createRealtimeWorkflow(call);
  await createSubscriber(call, 'ada', 'Ada');
  await createSubscriber(call, 'grace', 'Grace');
  adaToken = await mintSubscriberToken(call, server.deps, 'ada');
  graceToken = await mintSubscriberToken(call, server.deps, 'grace');
});
afterAll(async () => {
  for (const socket of sockets) socket.close();
  await server?.close();
});

async function open(token: string): Promise<InboxSocket> {
  const socket = await openInboxSocket(server.url, token);
  sockets.push(socket);
  return socket;
}

describe('the Inbox socket handshake', () => {
  it('accepts a subscriber session token in the query, as @novu/js sends it', async () => {
    const socket = await open(adaToken);
    expect(socket.socket.connected).toBe(true);
    socket.close();
  });

  it('refuses a handshake without a token, with a bad one, or with a dashboard session token', async () => {
    for (const token of [undefined, '', 'not-a-token', `${adaToken.slice(0, -4)}AAAA`, server.devSession]) {
      const error = await refusedHandshake(server.url, token);
      expect(error.message).toMatch(/subscriber session token/);
      expect(error.data).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    }
  });
});

describe('Inbox events', () => {
  it('a trigger made after connecting reaches the subscriber as notification_received and both counts; another subscriber gets nothing', async () => {
    const ada = await open(adaToken);
    const grace = await open(graceToken);
    const before = (await inAppMessages(call, 'ada')).filter((m) => !m.read);

    const transactionId = await triggerFor(call, 'ada', 'a-1');
    const received = await ada.waitFor('notification_received', (p) => p.message.transactionId === transactionId);
    const [stored] = (await inAppMessages(call, 'ada')).filter((m) => m.transactionId === transactionId);
    expect(stored).toBeDefined();
    // The raw, database-style message the clients map themselves (protocol §5.4).
    expect(received.message).toMatchObject({
      _id: stored._id,
      _subscriberId: stored._subscriberId,
      transactionId,
      channel: 'in_app',
      content: 'Item a-1',
      subject: 'News for Ada',
      read: false,
      seen: false,
      archived: false,
      cta: { type: 'redirect', data: { url: 'https://example.com/items/a-1' }, action: { status: 'pending', buttons: [{ type: 'primary', content: 'Open' }] } },
      subscriber: { _id: stored._subscriberId, subscriberId: 'ada', firstName: 'Ada' },
      workflow: { identifier: 'realtime-news', name: 'Realtime news', severity: 'high' },
      severity: 'high',
      tags: ['news'],
    });
    expect(typeof received.message.createdAt).toBe('string');
    expect(received.message.subscriber).not.toHaveProperty('channels');
    expect(received.message).not.toHaveProperty('overrides');

    const unread = before.length + 1;
    const counts = await ada.waitFor('unread_count_changed', (p) => p.counts.total === unread);
    // Every message of this workflow is `high`: the bell's severity split.
    expect(counts.counts.severity).toEqual({ high: unread, medium: 0, low: 0, none: 0 });
    await ada.waitFor('unseen_count_changed', (p) => typeof p.unseenCount === 'number' && p.unseenCount >= 1);

    // Grace's own trigger reaches her after Ada's events; had Ada's been sent to her room, they would be first.
    const graceTransaction = await triggerFor(call, 'grace', 'g-1');
    await grace.waitFor('notification_received', (p) => p.message.transactionId === graceTransaction);
    await grace.waitFor('unread_count_changed');
    expect(grace.events.filter((e) => e.name === 'notification_received').map((e) => e.payload.message.transactionId)).toEqual([graceTransaction]);
    expect(grace.events.every((e) => e.name !== 'notification_received' || e.payload.message.subscriber.subscriberId === 'grace')).toBe(true);
    expect(ada.events.some((e) => e.name === 'notification_received' && e.payload.message.transactionId === graceTransaction)).toBe(false);
    ada.close();
    grace.close();
  });

  it('a server-side mark-as sends the new counts; a delete sends them again', async () => {
    const first = await triggerFor(call, 'ada', 'm-1');
    const second = await triggerFor(call, 'ada', 'm-2');
    await server.waitForIdle();
    const messages = await inAppMessages(call, 'ada');
    const unread = messages.filter((m) => !m.read);
    const unseen = messages.filter((m) => !m.seen);
    const firstId = messages.find((m) => m.transactionId === first)._id;
    const secondId = messages.find((m) => m.transactionId === second)._id;

    const ada = await open(adaToken);
    const grace = await open(graceToken);
    const marked = await call('POST', '/v1/subscribers/ada/messages/mark-as', { messageId: firstId, markAs: 'read' });
    expect(marked.status, marked.text).toBe(201);
    const afterRead = await ada.waitFor('unread_count_changed');
    expect(afterRead.counts.total).toBe(unread.length - 1);
    expect((await ada.waitFor('unseen_count_changed')).unseenCount).toBe(unseen.length - 1);

    const mark = ada.events.length;
    const deleted = await call('DELETE', `/v1/messages/${secondId}`);
    expect(deleted.status, deleted.text).toBe(200);
    const afterDelete = await ada.waitFor('unread_count_changed', () => true, { from: mark });
    expect(afterDelete.counts.total).toBe(unread.length - 2);
    expect((await ada.waitFor('unseen_count_changed', () => true, { from: mark })).unseenCount).toBe(unseen.length - 2);
    // Read back: the counts are what the API shows.
    const now = await inAppMessages(call, 'ada');
    expect(now.filter((m) => !m.read)).toHaveLength(unread.length - 2);

    // Grace's socket heard none of it: her next own event is the first thing it receives.
    await triggerFor(call, 'grace', 'g-2');
    await grace.waitFor('notification_received');
    expect(grace.events[0]!.name).toBe('notification_received');
    ada.close();
    grace.close();
  });

  it('an action through the Inbox routes (archive, then the bulk read) sends the new counts', async () => {
    const transactionId = await triggerFor(call, 'ada', 'i-1');
    await server.waitForIdle();
    const id = (await inAppMessages(call, 'ada')).find((m) => m.transactionId === transactionId)._id;
    const ada = await open(adaToken);
    const before = (await inAppMessages(call, 'ada')).filter((m) => !m.read).length;
    const archived = await call('PATCH', `/v1/inbox/notifications/${id}/archive`, undefined, `Bearer ${adaToken}`);
    expect(archived.status, archived.text).toBe(200);
    expect((await ada.waitFor('unread_count_changed')).counts.total).toBe(before - 1);
    const mark = ada.events.length;
    const readAll = await call('POST', '/v1/inbox/notifications/read', { tags: [] }, `Bearer ${adaToken}`);
    expect(readAll.status, readAll.text).toBeLessThan(300);
    expect((await ada.waitFor('unread_count_changed', () => true, { from: mark })).counts.total).toBe(0);
    expect((await ada.waitFor('unseen_count_changed', () => true, { from: mark })).unseenCount).toBe(0);
    ada.close();
  });

  it('a subscriber with two sockets (two tabs or devices) gets the events on both, the counts once per delivery', async () => {
    const tabA = await open(adaToken);
    const tabB = await open(adaToken);
    const transactionId = await triggerFor(call, 'ada', 't-1');
    for (const tab of [tabA, tabB]) {
      await tab.waitFor('notification_received', (p) => p.message.transactionId === transactionId);
      await tab.waitFor('unread_count_changed');
      await tab.waitFor('unseen_count_changed');
    }
    // One read for the room, not one per socket the delivery reached (scaled out, each socket's packet asks for them).
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const tab of [tabA, tabB]) expect(tab.events.map((event) => event.name)).toEqual(['notification_received', 'unread_count_changed', 'unseen_count_changed']);
    tabA.close();
    tabB.close();
  });
});

describe('allowed origins (HERALD_INBOX_ALLOWED_ORIGINS) on the handshake', () => {
  let restricted: TestServer;
  let token: string;
  beforeAll(async () => {
    restricted = await startTestServer({ env: { HERALD_INBOX_ALLOWED_ORIGINS: 'https://app.example.com' } });
    const restrictedCall = heraldCaller(restricted.url, restricted.devKey);
    await createSubscriber(restrictedCall, 'ada', 'Ada');
    token = await mintSubscriberToken(restrictedCall, restricted.deps, 'ada');
  });
  afterAll(async () => {
    await restricted?.close();
  });

  it('accepts a listed origin and a client without Origin, refuses any other origin', async () => {
    const listed = await openInboxSocket(restricted.url, token, { origin: 'https://app.example.com' });
    listed.close();
    const noOrigin = await openInboxSocket(restricted.url, token);
    noOrigin.close();
    const error = await refusedHandshake(restricted.url, token, { origin: 'https://evil.example.com' });
    expect(error.message).toMatch(/websocket error|xhr poll error|Forbidden/i);
  });
});
