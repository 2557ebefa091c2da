import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message, Subscriber } from '../../src/domain/types.js';
import { insertMessage, insertSubscriber, scopeOf } from '../helpers/factories.js';
import { expectErrorBody, expectIsoTimestamp, expectRecordId } from '../helpers/shape.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let ada: Subscriber;
let grace: Subscriber;
let prodUser: Subscriber;

beforeAll(async () => {
  server = await startTestServer();
  const dev = await scopeOf(server.deps.store, server.devEnvironmentId);
  const prod = await scopeOf(server.deps.store, server.prodEnvironmentId);
  ada = await insertSubscriber(server.deps.store, dev, { subscriberId: 'ada' });
  grace = await insertSubscriber(server.deps.store, dev, { subscriberId: 'grace' });
  prodUser = await insertSubscriber(server.deps.store, prod, { subscriberId: 'ada' });
});
afterAll(async () => {
  await server?.close();
});

const CHANNELS = ['in_app', 'email', 'sms', 'chat', 'push'];

/** Every field of the spec's Message table that the record carries, with its type and enum range. */
function expectMessageShape(message: any): void {
  expectRecordId(message._id);
  expectRecordId(message._environmentId);
  expectRecordId(message._organizationId);
  expectRecordId(message._notificationId);
  expectRecordId(message._subscriberId);
  expectIsoTimestamp(message.createdAt);
  expect(typeof message.transactionId).toBe('string');
  expect(CHANNELS).toContain(message.channel);
  expect(typeof message.read).toBe('boolean');
  expect(typeof message.seen).toBe('boolean');
  expect(['sent', 'error', 'warning']).toContain(message.status);
  expect(typeof message.cta).toBe('object');
  expect(message.cta).not.toBeNull();
  if (message.cta.type !== undefined) expect(message.cta.type).toBe('redirect');
  for (const field of ['_templateId', '_messageTemplateId', '_feedId']) {
    if (message[field] !== undefined && message[field] !== null) expect(typeof message[field]).toBe('string');
  }
  if (message.lastReadDate !== undefined) expectIsoTimestamp(message.lastReadDate);
  if (message.lastSeenDate !== undefined) expectIsoTimestamp(message.lastSeenDate);
  if (message.deliveredAt !== undefined) message.deliveredAt.forEach(expectIsoTimestamp);
  if (Array.isArray(message.content)) {
    for (const block of message.content) {
      expect(['button', 'text']).toContain(block.type);
      expect(typeof block.content).toBe('string');
    }
  } else if (message.content !== undefined) {
    expect(typeof message.content).toBe('string');
  }
  if (message.subscriber !== undefined) expect(message.subscriber._id).toBe(message._subscriberId);
  expect(message).not.toHaveProperty('deleted');
  expect(message).not.toHaveProperty('_jobId');
}

function storedMessage(id: string, environmentId = server.devEnvironmentId) {
  return server.deps.store.messages.get(environmentId, id);
}

describe('GET /v1/messages', () => {
  it('lists the environment messages newest first with every field, and filters them', async () => {
    const fresh = await startTestServer();
    try {
      const scope = await scopeOf(fresh.deps.store, fresh.devEnvironmentId);
      const u1 = await insertSubscriber(fresh.deps.store, scope, { subscriberId: 'u1' });
      const u2 = await insertSubscriber(fresh.deps.store, scope, { subscriberId: 'u2' });
      const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
      const m1 = await insertMessage(fresh.deps.store, u1, { channel: 'in_app', createdAt: at(1), transactionId: 'tx-a', contextKeys: ['tenant:acme', 'region:eu'] });
      const m2 = await insertMessage(fresh.deps.store, u1, { channel: 'email', createdAt: at(2), transactionId: 'tx-b' });
      const m3 = await insertMessage(fresh.deps.store, u2, { channel: 'sms', createdAt: at(3), transactionId: 'tx-a', contextKeys: ['tenant:acme'] });
      const m4 = await insertMessage(fresh.deps.store, u2, {
        channel: 'in_app', createdAt: at(4), transactionId: 'tx-c', status: 'error', errorId: 'E1', errorText: 'boom',
        cta: { type: 'redirect', data: { url: 'https://x' }, action: { status: 'pending', buttons: [{ type: 'primary', content: 'Go' }] } },
      });
      const deleted = await insertMessage(fresh.deps.store, u2, { channel: 'in_app', createdAt: at(5) });
      await fresh.deps.store.messages.softDelete(scope.environmentId, deleted._id, at(6));

      const response = await fresh.request('GET', '/v1/messages');
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ page: 0, pageSize: 10, hasMore: false, totalCount: 4 });
      expect(response.body.data.map((m: any) => m._id)).toEqual([m4._id, m3._id, m2._id, m1._id]);
      response.body.data.forEach(expectMessageShape);

      const email = response.body.data[2];
      expect(email).toMatchObject({
        _id: m2._id, _environmentId: scope.environmentId, _organizationId: scope.organizationId, _subscriberId: u1._id,
        _notificationId: m2._notificationId, _templateId: m2._templateId, _messageTemplateId: m2._messageTemplateId,
        templateIdentifier: 'welcome', channel: 'email', transactionId: 'tx-b', read: false, seen: false, status: 'sent',
        subject: 'Welcome', email: u1.email, providerId: 'sendgrid', content: m2.content, cta: {}, payload: { orderId: 42 },
        deliveredAt: [at(2)], createdAt: at(2), _feedId: null, contextKeys: [],
      });
      expect(email.subscriber).toMatchObject({ _id: u1._id, subscriberId: 'u1', email: u1.email });
      expect(response.body.data[0]).toMatchObject({ status: 'error', errorId: 'E1', errorText: 'boom', cta: m4.cta });
      expect(response.body.data[3].contextKeys).toEqual(['tenant:acme', 'region:eu']);

      const ids = async (query: string) => {
        const page = await fresh.request('GET', `/v1/messages?${query}`);
        expect(page.status, query).toBe(200);
        return page.body.data.map((m: any) => m._id);
      };
      expect(await ids('channel=in_app')).toEqual([m4._id, m1._id]);
      expect(await ids('subscriberId=u1')).toEqual([m2._id, m1._id]);
      expect(await ids('transactionId=tx-a')).toEqual([m3._id, m1._id]);
      expect(await ids('transactionId=tx-a&transactionId=tx-b')).toEqual([m3._id, m2._id, m1._id]);
      expect(await ids('contextKeys=tenant:acme')).toEqual([m3._id]);
      expect(await ids('contextKeys=tenant:acme&contextKeys=region:eu')).toEqual([m1._id]);
      expect(await ids('contextKeys=region:eu&contextKeys=tenant:acme')).toEqual([m1._id]);
      expect(await ids('channel=in_app&subscriberId=u2&transactionId=tx-c')).toEqual([m4._id]);
      expect(await ids('channel=push')).toEqual([]);
      expect(await ids('limit=1000')).toHaveLength(4);

      const page1 = await fresh.request('GET', '/v1/messages?limit=3&page=1');
      expect(page1.body).toMatchObject({ page: 1, pageSize: 3, hasMore: false, totalCount: 4 });
      expect(page1.body.data.map((m: any) => m._id)).toEqual([m1._id]);
      const page0 = await fresh.request('GET', '/v1/messages?limit=3');
      expect(page0.body).toMatchObject({ page: 0, pageSize: 3, hasMore: true, totalCount: 4 });

      const prod = await fresh.request('GET', '/v1/messages', { key: fresh.prodKey });
      expect(prod.body).toMatchObject({ data: [], totalCount: 0, hasMore: false });
    } finally {
      await fresh.close();
    }
  });

  it('rejects bad query parameters with 400', async () => {
    for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'page=-1', 'page=1.5', 'channel=fax', 'contextKeys=nocolon', 'contextKeys=:x']) {
      const response = await server.request('GET', `/v1/messages?${query}`);
      expect(response.status, query).toBe(400);
      expectErrorBody(response.body, 400, `/v1/messages?${query}`);
      expect(Array.isArray(response.body.message)).toBe(true);
    }
    const limit = await server.request('GET', '/v1/messages?limit=1001');
    expect(limit.body.message.join()).toMatch(/limit must be <= 1000/);
  });
});

describe('POST /v1/subscribers/{subscriberId}/messages/mark-as', () => {
  const markAs = (subscriberId: string, body: unknown, key?: string) =>
    server.request('POST', `/v1/subscribers/${subscriberId}/messages/mark-as`, { body, key });

  it('marks read (which also marks seen), then unread, seen and unseen, stamping the dates', async () => {
    const a = await insertMessage(server.deps.store, ada);
    const b = await insertMessage(server.deps.store, ada);
    const read = await markAs('ada', { messageId: [a._id, b._id], markAs: 'read' });
    expect(read.status).toBe(201);
    expect(read.body.data.map((m: any) => m._id)).toEqual([a._id, b._id]);
    for (const message of read.body.data) {
      expectMessageShape(message);
      expect(message).toMatchObject({ read: true, seen: true });
      expectIsoTimestamp(message.lastReadDate);
      expectIsoTimestamp(message.lastSeenDate);
    }
    const storedA = await storedMessage(a._id);
    expect(storedA).toMatchObject({ read: true, seen: true, lastReadDate: read.body.data[0].lastReadDate });

    const unread = await markAs('ada', { messageId: a._id, markAs: 'unread' });
    expect(unread.status).toBe(201);
    expect(unread.body.data).toHaveLength(1);
    expect(unread.body.data[0]).toMatchObject({ _id: a._id, read: false, seen: true });
    expect(await storedMessage(a._id)).toMatchObject({ read: false, seen: true });

    const unseen = await markAs('ada', { messageId: [a._id], markAs: 'unseen' });
    expect(unseen.body.data[0]).toMatchObject({ read: false, seen: false });
    expect(await storedMessage(a._id)).toMatchObject({ read: false, seen: false });

    const seen = await markAs('ada', { messageId: a._id, markAs: 'seen' });
    expect(seen.body.data[0]).toMatchObject({ read: false, seen: true });
    expect(Date.parse(seen.body.data[0].lastSeenDate)).toBeGreaterThanOrEqual(Date.parse(read.body.data[0].lastSeenDate));
    expect(await storedMessage(b._id)).toMatchObject({ read: true, seen: true });
  });

  it('changes nothing and names the id when any id is not one of the subscriber in-app messages', async () => {
    const mine = await insertMessage(server.deps.store, ada);
    const email = await insertMessage(server.deps.store, ada, { channel: 'email' });
    const others = await insertMessage(server.deps.store, grace);
    const gone = await insertMessage(server.deps.store, ada);
    await server.deps.store.messages.softDelete(server.devEnvironmentId, gone._id, new Date().toISOString());
    for (const bad of [email._id, others._id, gone._id, 'not-an-id', '0123456789abcdef01234567']) {
      const response = await markAs('ada', { messageId: [mine._id, bad], markAs: 'read' });
      expect(response.status, bad).toBe(404);
      expectErrorBody(response.body, 404);
      expect(response.body.message).toBe(`Message with id ${bad} not found`);
    }
    expect(await storedMessage(mine._id)).toMatchObject({ read: false, seen: false });
    expect(await storedMessage(others._id)).toMatchObject({ read: false, seen: false });
    expect((await storedMessage(mine._id))!.lastReadDate).toBeUndefined();
  });

  it('answers 404 for an unknown subscriber and for another environment, changing nothing', async () => {
    const mine = await insertMessage(server.deps.store, ada);
    const unknown = await markAs('nobody', { messageId: mine._id, markAs: 'read' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Subscriber: nobody was not found');
    // The production environment has its own subscriber "ada"; the development message is still not hers.
    const other = await markAs('ada', { messageId: mine._id, markAs: 'read' }, server.prodKey);
    expect(other.status).toBe(404);
    expect(other.body.message).toBe(`Message with id ${mine._id} not found`);
    expect(await storedMessage(mine._id)).toMatchObject({ read: false, seen: false });
    expect(prodUser.subscriberId).toBe('ada');
  });

  it('rejects bad bodies with 400/415', async () => {
    const mine = await insertMessage(server.deps.store, ada);
    const cases: unknown[] = [
      {},
      { messageId: mine._id },
      { markAs: 'read' },
      { messageId: mine._id, markAs: 'archived' },
      { messageId: [], markAs: 'read' },
      { messageId: '', markAs: 'read' },
      { messageId: 5, markAs: 'read' },
      { messageId: [mine._id, 7], markAs: 'read' },
      { messageId: { id: mine._id }, markAs: 'read' },
      [mine._id],
    ];
    for (const body of cases) {
      const response = await markAs('ada', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expectErrorBody(response.body, 400);
    }
    const enumError = await markAs('ada', { messageId: mine._id, markAs: 'archived' });
    expect(enumError.body.message.join()).toMatch(/markAs must be one of the following values: read, seen, unread, unseen/);
    const malformed = await server.request('POST', '/v1/subscribers/ada/messages/mark-as', { rawBody: '{"messageId":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    const textBody = await server.request('POST', '/v1/subscribers/ada/messages/mark-as', { rawBody: 'read', headers: { 'content-type': 'text/plain' } });
    expect(textBody.status).toBe(415);
    expect(await storedMessage(mine._id)).toMatchObject({ read: false, seen: false });
  });
});

describe('DELETE /v1/messages/{messageId}', () => {
  it('soft-deletes: acknowledged, gone from lists, 404 afterwards', async () => {
    const message: Message = await insertMessage(server.deps.store, grace, { transactionId: 'tx-delete-me' });
    const other = await server.request('DELETE', `/v1/messages/${message._id}`, { key: server.prodKey });
    expect(other.status).toBe(404);
    expect(await storedMessage(message._id)).toBeDefined();

    const response = await server.request('DELETE', `/v1/messages/${message._id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { acknowledged: true, status: 'deleted' } });
    expect(await storedMessage(message._id)).toBeUndefined();
    expect((await server.deps.store.messages.findByJobId(server.devEnvironmentId, message._jobId!))!.deleted).toBe(true);
    const list = await server.request('GET', '/v1/messages?transactionId=tx-delete-me');
    expect(list.body).toMatchObject({ data: [], totalCount: 0 });

    const again = await server.request('DELETE', `/v1/messages/${message._id}`);
    expect(again.status).toBe(404);
    expect(again.body.message).toBe(`Message with id ${message._id} not found`);
    const badId = await server.request('DELETE', '/v1/messages/not-an-id');
    expect(badId.status).toBe(404);
    expectErrorBody(badId.body, 404);
  });
});
