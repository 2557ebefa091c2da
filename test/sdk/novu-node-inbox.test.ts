import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/node';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import type { InboxAudience } from '../../src/realtime/ports.js';
import { statusOf } from './novu-node-status.js';

/**
 * The legacy `@novu/node` 2.6.6 SDK's inbox and message methods against a real Herald with its worker: triggers
 * make real in-app (and email-less) messages, each method's answer is checked against the messages read back, and
 * every state change is announced to the subscriber's Inbox (deps.realtime) once.
 */
let server: TestServer;
let novu: Novu;
let prod: Novu;
const announced: InboxAudience[] = [];

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  novu = new Novu(server.devKey, { backendUrl: server.url });
  prod = new Novu(server.prodKey, { backendUrl: server.url });
  const realtime = server.deps.realtime;
  const forward = realtime.messagesChanged.bind(realtime);
  realtime.messagesChanged = (audience) => {
    announced.push(audience);
    forward(audience);
  };
  await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', active: true } });
  const workflow = await server.request('POST', '/v2/workflows', {
    body: { workflowId: 'node-inbox', name: 'Node inbox', active: true, steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hello {{payload.n}}' } }] },
  });
  expect(workflow.status).toBe(201);
});
afterAll(async () => {
  await server?.close();
});

async function messagesOf(subscriberId: string, extra = ''): Promise<Array<Record<string, any>>> {
  const response = await server.request('GET', `/v1/messages?subscriberId=${subscriberId}&channel=in_app&limit=100${extra}`);
  expect(response.status).toBe(200);
  return response.body.data;
}

/** Triggers `count` notifications to a fresh subscriber through the SDK and waits for their messages. */
async function inboxWith(subscriberId: string, count: number): Promise<{ recordId: string; transactionIds: string[] }> {
  const identified = await novu.subscribers.identify(subscriberId, { firstName: 'Inbox' });
  const transactionIds: string[] = [];
  for (let n = 0; n < count; n++) {
    const transactionId = `${subscriberId}-tx-${n}`;
    const triggered = await novu.trigger('node-inbox', { to: { subscriberId }, payload: { n }, transactionId });
    expect(triggered.status).toBe(201);
    transactionIds.push(transactionId);
  }
  await server.waitForIdle();
  for (const deadline = Date.now() + 10_000; (await messagesOf(subscriberId)).length < count; ) {
    if (Date.now() > deadline) throw new Error('messages did not arrive');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { recordId: identified.data.data._id, transactionIds };
}

describe('@novu/node inbox methods', () => {
  it('getNotificationsFeed: in-app items carry their subscriber (Novu\'s summary: no null fields)', async () => {
    const { recordId } = await inboxWith('node-feed', 2);
    const feed = await novu.subscribers.getNotificationsFeed('node-feed', { page: 0, limit: 10 });
    expect(feed.status).toBe(200);
    expect(feed.data).toMatchObject({ page: 0, pageSize: 10, totalCount: 2, hasMore: false });
    const subscriber = (await server.request('GET', '/v2/subscribers/node-feed')).body.data;
    expect(subscriber.lastName).toBeNull();
    for (const item of feed.data.data) {
      expect(item.subscriber).toEqual({ _id: subscriber._id, subscriberId: 'node-feed', firstName: 'Inbox' });
      expect(item._subscriberId).toBe(recordId);
    }
  });

  it('markMessageSeen, markMessageRead and markMessageAs set the flags read back, and announce each change', async () => {
    const { recordId } = await inboxWith('node-mark', 3);
    const [a, b, c] = await messagesOf('node-mark');
    announced.length = 0;

    const seen = await novu.subscribers.markMessageSeen('node-mark', a!._id);
    expect(seen.status).toBe(201);
    expect(seen.data.data).toEqual([expect.objectContaining({ _id: a!._id, seen: true, read: false, lastSeenDate: expect.any(String) })]);

    const read = await novu.subscribers.markMessageRead('node-mark', b!._id);
    expect(read.data.data[0]).toMatchObject({ _id: b!._id, seen: true, read: true });

    // read and explicitly unseen: the explicit flag wins over the seen that read implies
    const both = await novu.subscribers.markMessageAs('node-mark', c!._id, { read: true, seen: false });
    expect(both.data.data[0]).toMatchObject({ _id: c!._id, read: true, seen: false });

    // messageId may be an array (the SDK types it as a string; Novu's route takes both)
    const many = await novu.subscribers.markMessageAs('node-mark', [a!._id, b!._id] as unknown as string, { seen: false });
    expect(many.data.data.map((m: { _id: string; seen: boolean }) => [m._id, m.seen])).toEqual([[a!._id, false], [b!._id, false]]);

    const stored = new Map((await messagesOf('node-mark')).map((m) => [m._id, m]));
    expect(stored.get(a!._id)).toMatchObject({ seen: false, read: false });
    expect(stored.get(b!._id)).toMatchObject({ seen: false, read: true });
    expect(stored.get(c!._id)).toMatchObject({ seen: false, read: true });
    expect(announced).toEqual(Array(4).fill({ environmentId: server.devEnvironmentId, subscriberRecordId: recordId }));
  });

  it('markAllMessagesAs answers the count changed; getUnseenCount counts unseen or seen as asked', async () => {
    const { recordId } = await inboxWith('node-all', 3);
    const [first] = await messagesOf('node-all');
    await novu.subscribers.markMessageSeen('node-all', first!._id);
    expect((await novu.subscribers.getUnseenCount('node-all', false)).data).toEqual({ data: { count: 2 } });
    expect((await novu.subscribers.getUnseenCount('node-all', true)).data).toEqual({ data: { count: 1 } });
    announced.length = 0;

    const seenAll = await novu.subscribers.markAllMessagesAs('node-all', 'seen' as never);
    expect(seenAll.status).toBe(201);
    expect(seenAll.data).toEqual({ data: 2 });
    expect((await messagesOf('node-all')).every((m) => m.seen && !m.read)).toBe(true);
    expect((await novu.subscribers.getUnseenCount('node-all', false)).data.data.count).toBe(0);
    expect((await novu.subscribers.getUnseenCount('node-all', true)).data.data.count).toBe(3);

    expect((await novu.subscribers.markAllMessagesAs('node-all', 'seen' as never)).data).toEqual({ data: 0 });
    expect((await novu.subscribers.markAllMessagesAs('node-all', 'read' as never)).data).toEqual({ data: 3 });
    expect((await messagesOf('node-all')).every((m) => m.read && m.seen)).toBe(true);
    expect((await novu.subscribers.markAllMessagesAs('node-all', 'unread' as never)).data).toEqual({ data: 3 });
    expect((await novu.subscribers.markAllMessagesAs('node-all', 'unseen' as never)).data).toEqual({ data: 3 });
    expect((await messagesOf('node-all')).every((m) => !m.read && !m.seen)).toBe(true);
    // Herald has no feeds: a feed identifier matches no message
    expect((await novu.subscribers.markAllMessagesAs('node-all', 'read' as never, 'some-feed')).data).toEqual({ data: 0 });
    expect((await messagesOf('node-all')).every((m) => !m.read)).toBe(true);
    // one announcement per call that changed something (the 0-count calls changed nothing)
    expect(announced).toEqual(Array(4).fill({ environmentId: server.devEnvironmentId, subscriberRecordId: recordId }));
  });

  it('messages.list filters by transactionIds (sent as transactionId[]) and deleteByTransactionId deletes them', async () => {
    const { recordId, transactionIds } = await inboxWith('node-tx', 3);
    const listed = await novu.messages.list({ transactionIds: [transactionIds[0]!, transactionIds[2]!] } as never);
    expect(listed.data.totalCount).toBe(2);
    expect(listed.data.data.map((m: { transactionId: string }) => m.transactionId).sort()).toEqual([transactionIds[0], transactionIds[2]].sort());
    const single = await novu.messages.list({ transactionIds: [transactionIds[1]!] } as never);
    expect(single.data.data.map((m: { transactionId: string }) => m.transactionId)).toEqual([transactionIds[1]]);

    announced.length = 0;
    const deleted = await novu.messages.deleteByTransactionId(transactionIds[0]!);
    expect(deleted.status).toBe(204);
    expect((await messagesOf('node-tx')).map((m) => m.transactionId).sort()).toEqual([transactionIds[1], transactionIds[2]].sort());
    expect(announced).toEqual([{ environmentId: server.devEnvironmentId, subscriberRecordId: recordId }]);
    expect(await statusOf(novu.messages.deleteByTransactionId(transactionIds[0]!))).toBe(404);
  });

  it('keeps environments apart: 404 and nothing changed', async () => {
    await inboxWith('node-env', 1);
    const [message] = await messagesOf('node-env');
    expect(await statusOf(prod.subscribers.markMessageRead('node-env', message!._id))).toBe(404);
    expect(await statusOf(prod.subscribers.markAllMessagesAs('node-env', 'read' as never))).toBe(404);
    expect(await statusOf(prod.subscribers.getUnseenCount('node-env', false))).toBe(404);
    expect(await statusOf(prod.messages.deleteByTransactionId(message!.transactionId))).toBe(404);
    expect((await messagesOf('node-env'))[0]).toMatchObject({ _id: message!._id, read: false, seen: false });
  });
});
