import { createHmac } from 'node:crypto';
import { io } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message, Subscriber } from '../../src/domain/types.js';
import type { InboxEvent } from '../../src/realtime/ports.js';
import { insertMessage } from '../helpers/factories.js';
import { recordRealtime } from '../helpers/realtime-recorder.js';
import { expectErrorBody } from '../helpers/shape.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The older widget's routes (/v1/widgets/*) over real HTTP, as @novu/client 2.6.6 sends them
 * (spec/widget-client-protocol.md): every route's envelope and status, the session's checks, scoping (another
 * subscriber's or environment's message is a 404), bad input (4xx JSON with `message`, nothing changed), and state
 * read back through the server-side API. HERALD_TEST_MODE=scaleout runs the same over PostgreSQL and Redis.
 */
describe('the widget routes (/v1/widgets)', () => {
  let server: TestServer;
  let devIdentifier: string;
  let prodIdentifier: string;
  const events: InboxEvent[] = [];

  // @novu/client sends Content-Type: application/json on every call.
  const widget = (method: string, path: string, token: string, body?: unknown) =>
    server.request(method, `/v1/widgets${path}`, { bearer: token, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body }) });
  const session = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    server.request('POST', '/v1/widgets/session/initialize', { key: null, headers: { 'content-type': 'application/json', ...headers }, body });
  const tokenFor = async (subscriberId: string, identifier = devIdentifier, key = server.devKey) => {
    const response = await session({ applicationIdentifier: identifier, subscriberId, hmacHash: createHmac('sha256', key).update(subscriberId).digest('hex') });
    expect(response.status, response.text).toBe(201);
    return response.body.data.token as string;
  };
  const subscriberOf = async (subscriberId: string, environmentId = server.devEnvironmentId): Promise<Subscriber> =>
    (await server.deps.store.subscribers.findBySubscriberId(environmentId, subscriberId))!;
  const at = (minutes: number) => new Date(Date.parse('2026-03-01T10:00:00.000Z') + minutes * 60_000).toISOString();
  const serverSide = async (subscriberId: string, key = server.devKey): Promise<Message[]> => {
    const response = await server.request('GET', `/v1/messages?subscriberId=${subscriberId}&channel=in_app&limit=100`, { key });
    expect(response.status, response.text).toBe(200);
    return response.body.data;
  };
  const expectJsonError = (response: { status: number; body: any; headers: Headers }, status: number) => {
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expectErrorBody(response.body, status);
  };

  beforeAll(async () => {
    server = await startTestServer();
    devIdentifier = (await server.request('GET', '/v1/environments/me')).body.data.identifier;
    prodIdentifier = (await server.request('GET', '/v1/environments/me', { key: server.prodKey })).body.data.identifier;
    const integration = await server.request('POST', '/v1/integrations', {
      body: { providerId: 'novu', channel: 'in_app', name: 'In-app', credentials: { hmac: true }, active: true },
    });
    expect(integration.status, integration.text).toBe(201);
    recordRealtime(server, events);
  });
  afterAll(async () => server?.close());

  it("stops a deleted subscriber's widget token at once, and a re-created subscriber does not revive it", async () => {
    const token = await tokenFor('w-leaving');
    expect((await widget('GET', '/notifications/unseen', token)).status).toBe(200);
    expect((await widget('GET', '/notifications/unseen', token)).status).toBe(200);
    const deleted = await server.request('DELETE', '/v2/subscribers/w-leaving');
    expect(deleted.status, deleted.text).toBe(200);
    expectJsonError(await widget('GET', '/notifications/unseen', token), 401);
    expectJsonError(await widget('GET', '/notifications/feed', token), 401);
    const again = await server.request('POST', '/v2/subscribers', { body: { subscriberId: 'w-leaving' } });
    expect(again.status, again.text).toBe(201);
    expectJsonError(await widget('GET', '/notifications/unseen', token), 401);
    // A new session of the re-created subscriber works.
    expect((await widget('GET', '/notifications/unseen', await tokenFor('w-leaving'))).status).toBe(200);
  });

  describe('POST /session/initialize', () => {
    it('answers 201 {data: {token, profile}}, creates the subscriber with the profile sent, and ignores a stale Bearer', async () => {
      const subscriberId = 'w-session';
      const hmacHash = createHmac('sha256', server.devKey).update(subscriberId).digest('hex');
      const response = await session(
        { applicationIdentifier: devIdentifier, subscriberId, hmacHash, firstName: 'Ada', lastName: 'Lovelace', phone: '+441234567890', email: 'ada@example.com' },
        { authorization: 'Bearer a-token-from-an-earlier-visit' },
      );
      expect(response.status, response.text).toBe(201);
      const stored = await subscriberOf(subscriberId);
      expect(response.body).toEqual({ data: { token: expect.any(String), profile: { _id: stored._id, firstName: 'Ada', lastName: 'Lovelace', phone: '+441234567890' } } });
      expect(stored.email).toBe('ada@example.com');
      // A second session without a profile keeps it; the token works on the widget routes.
      const again = await session({ applicationIdentifier: devIdentifier, subscriberId, hmacHash: hmacHash.toUpperCase() });
      expect(again.status, again.text).toBe(201);
      expect(again.body.data.profile).toMatchObject({ _id: stored._id, firstName: 'Ada' });
      expect((await widget('GET', '/notifications/unseen', again.body.data.token)).body).toEqual({ data: { count: 0 } });
    });

    it('a bad identifier is a 400, a wrong or missing hash a 400, an environment without an in-app integration a 404: nothing created', async () => {
      const unknown = await session({ applicationIdentifier: 'no-such-app', subscriberId: 'w-x', hmacHash: null });
      expectJsonError(unknown, 400);
      expect(unknown.body.message).toEqual(['Please provide a valid app identifier']);

      const wrong = await session({ applicationIdentifier: devIdentifier, subscriberId: 'w-wrong', hmacHash: createHmac('sha256', 'not-the-key').update('w-wrong').digest('hex') });
      expectJsonError(wrong, 400);
      expect(wrong.body.message).toEqual(['Please provide a valid HMAC hash']);
      const missing = await session({ applicationIdentifier: devIdentifier, subscriberId: 'w-wrong', hmacHash: null });
      expectJsonError(missing, 400);
      const otherSubscriber = await session({ applicationIdentifier: devIdentifier, subscriberId: 'w-wrong', hmacHash: createHmac('sha256', server.devKey).update('someone').digest('hex') });
      expectJsonError(otherSubscriber, 400);
      expect(await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'w-wrong')).toBeUndefined();

      // production has no in-app integration yet.
      const noIntegration = await session({ applicationIdentifier: prodIdentifier, subscriberId: 'w-prod', hmacHash: null });
      expectJsonError(noIntegration, 404);
      expect(noIntegration.body.message).toBe('In app integration could not be found');
      expect(await server.deps.store.subscribers.findBySubscriberId(server.prodEnvironmentId, 'w-prod')).toBeUndefined();

      for (const body of [{}, { applicationIdentifier: devIdentifier }, { applicationIdentifier: devIdentifier, subscriberId: 5 }, { applicationIdentifier: devIdentifier, subscriberId: '  ' }]) {
        expectJsonError(await session(body), 400);
      }
      const badEmail = await session({ applicationIdentifier: devIdentifier, subscriberId: 'w-bad-email', hmacHash: createHmac('sha256', server.devKey).update('w-bad-email').digest('hex'), email: 'not-an-email' });
      expectJsonError(badEmail, 400);
      expect(await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'w-bad-email')).toBeUndefined();
      const notJson = await server.request('POST', '/v1/widgets/session/initialize', { key: null, headers: { 'content-type': 'application/json' }, rawBody: '{"applicationIdentifier":' });
      expectJsonError(notJson, 400);
    });

    it('the preflight is answered before auth, with the headers the widget sends; answers carry CORS headers', async () => {
      const preflight = await server.request('OPTIONS', '/v1/widgets/session/initialize', {
        key: null,
        headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization/);
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/content-type/);
      const token = await tokenFor('w-cors');
      const answer = await server.request('GET', '/v1/widgets/notifications/feed?page=0', { bearer: token, headers: { origin: 'http://localhost:5173' } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    });
  });

  describe('authentication', () => {
    it('widget routes take only a subscriber token; a widget token reaches no server-side route', async () => {
      expectJsonError(await server.request('GET', '/v1/widgets/notifications/feed', { key: null }), 401);
      expectJsonError(await server.request('GET', '/v1/widgets/notifications/feed'), 401);
      expectJsonError(await server.request('GET', '/v1/widgets/notifications/feed', { bearer: 'not.a.token' }), 401);
      const token = await tokenFor('w-auth');
      expectJsonError(await server.request('GET', '/v1/messages', { bearer: token }), 401);
      // The Inbox and the widget share one token model.
      expect((await server.request('GET', '/v1/inbox/notifications/count?filters=[{"read":false}]', { bearer: token })).status).toBe(200);
    });

    it('an unknown widget path is a JSON 4xx with a message', async () => {
      const token = await tokenFor('w-auth');
      const response = await widget('GET', '/no-such-route', token);
      expect([401, 404]).toContain(response.status);
      expect(typeof response.body.message).toBe('string');
      expectJsonError(await server.request('GET', '/v1/widgets/no-such-route', { key: null }), 401);
    });
  });

  describe('the feed and the counts', () => {
    let token: string;
    let ada: Subscriber;
    const ids: string[] = [];

    beforeAll(async () => {
      token = await tokenFor('w-feed');
      ada = await subscriberOf('w-feed');
      // Oldest first: m0 .. m5. m1 read, m2 seen, m3 in feed "news", m4 in "billing" with a payload, m5 snoozed.
      const specs: Array<Partial<Message>> = [
        { content: 'm0', payload: { kind: 'plain' } },
        { content: 'm1', read: true, seen: true },
        { content: 'm2', seen: true },
        { content: 'm3', _feedId: 'news', payload: { kind: 'news', author: { name: 'Grace', id: 7 } } },
        { content: 'm4', _feedId: 'billing', payload: { kind: 'invoice', amount: 12 } },
        { content: 'm5', snoozedUntil: '2099-01-01T00:00:00.000Z' },
      ];
      for (const [index, spec] of specs.entries()) {
        const message = await insertMessage(server.deps.store, ada, { createdAt: at(index), updatedAt: at(index), ...spec });
        ids.push(message._id);
      }
    });

    it('answers {data, totalCount, hasMore, pageSize, page} at the top level, newest first, message records as items', async () => {
      const response = await widget('GET', '/notifications/feed?page=0', token);
      expect(response.status).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(['data', 'hasMore', 'page', 'pageSize', 'totalCount']);
      expect(response.body).toMatchObject({ totalCount: 5, hasMore: false, pageSize: 10, page: 0 });
      // The snoozed message is not shown until it comes back.
      expect(response.body.data.map((m: Message) => m.content)).toEqual(['m4', 'm3', 'm2', 'm1', 'm0']);
      const item = response.body.data[1];
      expect(item).toMatchObject({
        _id: ids[3],
        _subscriberId: ada._id,
        _environmentId: server.devEnvironmentId,
        _feedId: 'news',
        channel: 'in_app',
        content: 'm3',
        read: false,
        seen: false,
        cta: expect.any(Object),
        payload: { kind: 'news', author: { name: 'Grace', id: 7 } },
        subscriber: { _id: ada._id, subscriberId: 'w-feed' },
        createdAt: at(3),
      });
      // Server-side material stays on the server.
      expect(item).not.toHaveProperty('template');
      expect(item).not.toHaveProperty('overrides');
      expect(typeof item._templateId).toBe('string');
      expect(typeof item._jobId).toBe('string');
      expect(typeof item.transactionId).toBe('string');
    });

    it('pages by number with Novu’s totalCount (the page’s size) and hasMore', async () => {
      const first = await widget('GET', '/notifications/feed?page=0&limit=2', token);
      expect(first.body).toMatchObject({ totalCount: 2, hasMore: true, pageSize: 2, page: 0 });
      expect(first.body.data.map((m: Message) => m.content)).toEqual(['m4', 'm3']);
      const last = await widget('GET', '/notifications/feed?page=2&limit=2', token);
      expect(last.body).toMatchObject({ totalCount: 1, hasMore: false, page: 2 });
      expect(last.body.data.map((m: Message) => m.content)).toEqual(['m0']);
      const beyond = await widget('GET', '/notifications/feed?page=9&limit=2', token);
      expect(beyond.body).toMatchObject({ data: [], totalCount: 0, hasMore: false });
    });

    it('filters by seen, read, feedIdentifier (one, repeated or a comma list) and payload; unset store fields are ignored', async () => {
      const contents = async (query: string) => (await widget('GET', `/notifications/feed?${query}`, token)).body.data.map((m: Message) => m.content);
      expect(await contents('seen=false')).toEqual(['m4', 'm3', 'm0']);
      expect(await contents('read=true')).toEqual(['m1']);
      expect(await contents('feedIdentifier=news')).toEqual(['m3']);
      expect(await contents('feedIdentifier=news&feedIdentifier=billing')).toEqual(['m4', 'm3']);
      expect(await contents('feedIdentifier=news,billing')).toEqual(['m4', 'm3']);
      expect(await contents('feedIdentifier=nothing')).toEqual([]);
      const b64 = (value: unknown) => encodeURIComponent(Buffer.from(JSON.stringify(value)).toString('base64'));
      expect(await contents(`payload=${b64({ kind: 'invoice' })}`)).toEqual(['m4']);
      expect(await contents(`payload=${b64({ author: { name: 'Grace' } })}`)).toEqual(['m3']);
      expect(await contents(`payload=${b64({ author: { name: 'Ada' } })}`)).toEqual([]);
      expect(await contents('seen=undefined&read=undefined&page=0')).toEqual(['m4', 'm3', 'm2', 'm1', 'm0']);
    });

    it('the count routes answer {data: {count}} with Novu’s defaults and the limit cap', async () => {
      const count = async (path: string) => {
        const response = await widget('GET', path, token);
        expect(response.status, response.text).toBe(200);
        expect(Object.keys(response.body.data)).toEqual(['count']);
        return response.body.data.count;
      };
      expect(await count('/notifications/unseen?limit=100')).toBe(3);
      expect(await count('/notifications/unseen?seen=true')).toBe(2);
      expect(await count('/notifications/unseen?limit=2')).toBe(2);
      expect(await count('/notifications/unread?limit=100')).toBe(4);
      expect(await count('/notifications/unread?read=true')).toBe(1);
      expect(await count('/notifications/count')).toBe(3);
      expect(await count('/notifications/count?read=false&feedIdentifier=news')).toBe(1);
      expect(await count('/notifications/count?seen=false&limit=100&feedIdentifier=billing,news')).toBe(2);
    });

    it('bad query values are 400s naming the field', async () => {
      for (const query of ['page=-1', 'page=x', 'limit=0', 'limit=101', 'seen=maybe', 'payload=%%%', `payload=${Buffer.from('not json').toString('base64')}`, `payload=${Buffer.from('[1]').toString('base64')}`]) {
        const response = await widget('GET', `/notifications/feed?${query}`, token);
        expectJsonError(response, 400);
      }
      expectJsonError(await widget('GET', '/notifications/unseen?limit=1000', token), 400);
      expectJsonError(await widget('GET', '/notifications/count?read=sometimes', token), 400);
    });
  });

  describe('marking, removing, actions', () => {
    let token: string;
    let grace: Subscriber;
    let other: Subscriber;
    let prodMessage: Message;

    const fresh = async (overrides: Partial<Message> = {}) => insertMessage(server.deps.store, grace, overrides);

    beforeAll(async () => {
      token = await tokenFor('w-grace');
      grace = await subscriberOf('w-grace');
      await tokenFor('w-other');
      other = await subscriberOf('w-other');
      const prodSubscriber = await server.request('POST', '/v1/subscribers', { key: server.prodKey, body: { subscriberId: 'w-grace' } });
      expect(prodSubscriber.status, prodSubscriber.text).toBe(201);
      prodMessage = await insertMessage(server.deps.store, (await subscriberOf('w-grace', server.prodEnvironmentId))!);
    });

    it('POST /messages/markAs {messageId, mark} answers 201 with the updated messages; the server-side API shows the change; it is announced', async () => {
      const [a, b] = [await fresh(), await fresh()];
      const before = events.length;
      const response = await widget('POST', '/messages/markAs', token, { messageId: [a._id, b._id], mark: { seen: true, read: true } });
      expect(response.status, response.text).toBe(201);
      expect(response.body.data.map((m: Message) => [m._id, m.read, m.seen])).toEqual([
        [a._id, true, true],
        [b._id, true, true],
      ]);
      const stored = await serverSide('w-grace');
      expect(stored.find((m) => m._id === a._id)).toMatchObject({ read: true, seen: true });
      expect(events.slice(before)).toContainEqual({ kind: 'messages-changed', audience: { environmentId: server.devEnvironmentId, subscriberRecordId: grace._id } });

      // One id as a string; read:false leaves seen.
      const unread = await widget('POST', '/messages/markAs', token, { messageId: a._id, mark: { seen: true, read: false } });
      expect(unread.status).toBe(201);
      expect(unread.body.data).toEqual([expect.objectContaining({ _id: a._id, read: false, seen: true })]);
    });

    it('POST /messages/mark-as {messageId, markAs} answers 201 with the updated messages', async () => {
      const a = await fresh();
      const response = await widget('POST', '/messages/mark-as', token, { messageId: [a._id], markAs: 'seen' });
      expect(response.status).toBe(201);
      expect(response.body.data).toEqual([expect.objectContaining({ _id: a._id, seen: true, read: false })]);
      const unseen = await widget('POST', '/messages/mark-as', token, { messageId: a._id, markAs: 'unseen' });
      expect(unseen.body.data[0].seen).toBe(false);
    });

    it('another subscriber’s, another environment’s, an unknown or a malformed id is a 404 and nothing changes', async () => {
      const mine = await fresh();
      const theirs = await insertMessage(server.deps.store, other);
      for (const foreign of [theirs._id, prodMessage._id, '0123456789abcdef01234567', 'not-an-id']) {
        const marked = await widget('POST', '/messages/markAs', token, { messageId: [mine._id, foreign], mark: { read: true } });
        expectJsonError(marked, 404);
        expect(marked.body.message).toBe(`Message with id ${foreign} not found`);
        expectJsonError(await widget('POST', '/messages/mark-as', token, { messageId: foreign, markAs: 'read' }), 404);
        expectJsonError(await widget('DELETE', `/messages/${foreign}`, token, {}), 404);
        expectJsonError(await widget('POST', `/messages/${foreign}/actions/primary`, token, { status: 'done' }), 404);
      }
      expect((await serverSide('w-grace')).find((m) => m._id === mine._id)).toMatchObject({ read: false, seen: false });
      expect((await serverSide('w-other')).find((m) => m._id === theirs._id)).toMatchObject({ read: false, seen: false });
      expect((await serverSide('w-grace', server.prodKey)).find((m) => m._id === prodMessage._id)).toMatchObject({ read: false });
      // Bulk delete ignores ids that are not the caller's (Novu deletes by subscriber): theirs survives.
      expect((await widget('POST', '/messages/bulk/delete', token, { messageIds: [theirs._id, prodMessage._id] })).status).toBe(200);
      expect((await serverSide('w-other')).some((m) => m._id === theirs._id)).toBe(true);
      expect((await serverSide('w-grace', server.prodKey)).some((m) => m._id === prodMessage._id)).toBe(true);
    });

    it('bad bodies are 400s with a message, nothing changed', async () => {
      const mine = await fresh();
      const bodies: Array<[string, unknown]> = [
        ['/messages/markAs', { mark: { read: true } }],
        ['/messages/markAs', { messageId: mine._id }],
        ['/messages/markAs', { messageId: mine._id, mark: {} }],
        ['/messages/markAs', { messageId: mine._id, mark: { read: 'yes' } }],
        ['/messages/markAs', { messageId: [], mark: { read: true } }],
        ['/messages/mark-as', { messageId: mine._id, markAs: 'archived' }],
        ['/messages/read', { feedId: 5 }],
        ['/messages/bulk/delete', { messageIds: 'x' }],
        ['/messages/bulk/delete', {}],
        [`/messages/${mine._id}/actions/primary`, { status: 'finished' }],
        [`/messages/${mine._id}/actions/tertiary`, { status: 'done' }],
        ['/usage/log', { payload: {} }],
      ];
      for (const [path, body] of bodies) {
        const response = await widget('POST', path, token, body);
        expect(response.status, `${path} ${JSON.stringify(body)}`).toBe(400);
        expectErrorBody(response.body, 400);
      }
      expect((await serverSide('w-grace')).find((m) => m._id === mine._id)).toMatchObject({ read: false, seen: false, cta: {} });
    });

    it('mark all read / seen (optionally of feeds) answer 201 with the number changed', async () => {
      const token2 = await tokenFor('w-all');
      const subscriber = await subscriberOf('w-all');
      const news = await insertMessage(server.deps.store, subscriber, { _feedId: 'news' });
      await insertMessage(server.deps.store, subscriber);
      await insertMessage(server.deps.store, subscriber, { seen: true });
      const seenNews = await widget('POST', '/messages/seen', token2, { feedId: 'news' });
      expect(seenNews.status).toBe(201);
      expect(seenNews.body).toEqual({ data: 1 });
      expect((await serverSide('w-all')).find((m) => m._id === news._id)).toMatchObject({ seen: true, read: false });
      const seenAll = await widget('POST', '/messages/seen', token2, {});
      expect(seenAll.body).toEqual({ data: 1 });
      const readAll = await widget('POST', '/messages/read', token2, {});
      expect(readAll.status).toBe(201);
      expect(readAll.body).toEqual({ data: 3 });
      expect((await serverSide('w-all')).every((m) => m.read && m.seen)).toBe(true);
      expect((await widget('POST', '/messages/read', token2)).body).toEqual({ data: 0 });
    });

    it('the server-side mark-all (POST /v1/subscribers/{id}/messages/mark-all) honours the same step feeds', async () => {
      await tokenFor('w-server-feeds');
      const subscriber = await subscriberOf('w-server-feeds');
      const news = await insertMessage(server.deps.store, subscriber, { _feedId: 'news' });
      const plain = await insertMessage(server.deps.store, subscriber);
      const marked = await server.request('POST', '/v1/subscribers/w-server-feeds/messages/mark-all', { body: { markAs: 'read', feedIdentifier: ['news'] } });
      expect(marked.status, marked.text).toBe(201);
      expect(marked.body).toEqual({ data: 1 });
      const stored = await serverSide('w-server-feeds');
      expect(stored.find((m) => m._id === news._id)).toMatchObject({ read: true, seen: true });
      expect(stored.find((m) => m._id === plain._id)).toMatchObject({ read: false, seen: false });
      expect((await server.request('POST', '/v1/subscribers/w-server-feeds/messages/mark-all', { body: { markAs: 'read', feedIdentifier: 'nothing' } })).body).toEqual({ data: 0 });
    });

    it('DELETE /messages/:id answers 200 with the message; bulk delete 200; DELETE /messages (of a feed) 204', async () => {
      const token3 = await tokenFor('w-remove');
      const subscriber = await subscriberOf('w-remove');
      const [a, b, c, d] = [
        await insertMessage(server.deps.store, subscriber),
        await insertMessage(server.deps.store, subscriber),
        await insertMessage(server.deps.store, subscriber, { _feedId: 'news' }),
        await insertMessage(server.deps.store, subscriber),
      ];
      const removed = await widget('DELETE', `/messages/${a._id}`, token3, {});
      expect(removed.status).toBe(200);
      expect(removed.body.data).toMatchObject({ _id: a._id, deleted: true });
      const bulk = await widget('POST', '/messages/bulk/delete', token3, { messageIds: [b._id] });
      expect(bulk.status).toBe(200);
      const ofFeed = await server.request('DELETE', '/v1/widgets/messages?feedId=news', { bearer: token3 });
      expect(ofFeed.status).toBe(204);
      expect((await serverSide('w-remove')).map((m) => m._id)).toEqual([d._id]);
      expect((await server.request('DELETE', '/v1/widgets/messages', { bearer: token3, headers: { 'content-type': 'application/json' }, body: {} })).status).toBe(204);
      expect(await serverSide('w-remove')).toEqual([]);
      expect(c._id).toBeTruthy();
    });

    it('POST /messages/:id/actions/:type records the status and result on cta.action', async () => {
      const message = await fresh({ cta: { type: 'redirect', data: {}, action: { status: 'pending', buttons: [{ type: 'primary', content: 'Accept' }] } } });
      const response = await widget('POST', `/messages/${message._id}/actions/primary`, token, { executedType: 'primary', status: 'done', payload: { answer: 42 } });
      expect(response.status, response.text).toBe(201);
      expect(response.body.data.cta.action).toEqual({ status: 'done', buttons: [{ type: 'primary', content: 'Accept' }], result: { type: 'primary', payload: { answer: 42 } } });
      expect((await serverSide('w-grace')).find((m) => m._id === message._id)!.cta.action).toMatchObject({ status: 'done', result: { type: 'primary' } });
    });
  });

  describe('freshness and realtime', () => {
    it('a read right after a write shows the write (the read cache, where on, is made stale by the write)', async () => {
      const token = await tokenFor('w-fresh');
      const subscriber = await subscriberOf('w-fresh');
      const message = await insertMessage(server.deps.store, subscriber);
      expect((await widget('GET', '/notifications/unseen?limit=100', token)).body).toEqual({ data: { count: 1 } });
      expect((await widget('GET', '/notifications/feed?page=0', token)).body.data[0].seen).toBe(false);
      expect((await widget('POST', '/messages/markAs', token, { messageId: message._id, mark: { seen: true } })).status).toBe(201);
      expect((await widget('GET', '/notifications/unseen?limit=100', token)).body).toEqual({ data: { count: 0 } });
      expect((await widget('GET', '/notifications/feed?page=0', token)).body.data[0].seen).toBe(true);
    });

    it('the socket takes the token in the handshake auth (as the React widget sends it); count events satisfy both client generations', async () => {
      const token = await tokenFor('w-socket');
      const subscriber = await subscriberOf('w-socket');
      const [a] = [await insertMessage(server.deps.store, subscriber), await insertMessage(server.deps.store, subscriber)];
      const socket = io(server.url, { transports: ['websocket'], auth: { token }, reconnection: false, forceNew: true });
      const received: Array<[string, any]> = [];
      socket.onAny((name: string, payload: unknown) => received.push([name, payload]));
      try {
        await new Promise<void>((resolve, reject) => {
          socket.once('connect', () => resolve());
          socket.once('connect_error', reject);
        });
        expect((await widget('POST', '/messages/markAs', token, { messageId: a._id, mark: { read: true, seen: true } })).status).toBe(201);
        await expect.poll(() => received.map(([name]) => name).sort(), { timeout: 10_000 }).toEqual(['unread_count_changed', 'unseen_count_changed']);
        const payload = (name: string) => received.find(([event]) => event === name)![1];
        expect(payload('unread_count_changed')).toEqual({ unreadCount: 1, hasMore: false, counts: { total: 1, severity: { high: 0, medium: 0, low: 0, none: 1 } } });
        expect(payload('unseen_count_changed')).toEqual({ unseenCount: 1, hasMore: false });
      } finally {
        socket.close();
      }
    });
  });

  describe('organization, usage log, preferences', () => {
    let token: string;
    let workflowId: string;

    beforeAll(async () => {
      token = await tokenFor('w-prefs');
      const workflow = await server.request('POST', '/v2/workflows', {
        body: {
          workflowId: 'w-digest',
          name: 'Weekly digest',
          active: true,
          steps: [
            { name: 'bell', type: 'in_app', controlValues: { body: 'Hello' } },
            { name: 'mail', type: 'email', controlValues: { subject: 'Hi', body: 'Hello' } },
          ],
        },
      });
      expect(workflow.status, workflow.text).toBe(201);
      workflowId = workflow.body.data._id;
    });

    it('GET /organization answers {_id, name, branding}; POST /usage/log answers 201 {success: true}', async () => {
      const organization = await widget('GET', '/organization', token);
      expect(organization.status).toBe(200);
      expect(organization.body.data).toEqual({ _id: expect.any(String), name: expect.any(String), branding: {} });
      const usage = await widget('POST', '/usage/log', token, { name: '[Widget] - Notification Click', payload: { notificationId: 'x', hasCta: false } });
      expect(usage.status).toBe(201);
      expect(usage.body).toEqual({ data: { success: true } });
    });

    it('lists the workflow; a channel switch by the workflow’s _id persists (read back server-side); the global level reads and writes', async () => {
      const list = await widget('GET', '/preferences', token);
      expect(list.status).toBe(200);
      const row = list.body.data.find((r: any) => r.template._id === workflowId);
      expect(row).toMatchObject({ template: { _id: workflowId, name: 'Weekly digest', critical: false }, preference: { enabled: true, channels: { in_app: true, email: true } } });
      expect((await widget('GET', '/preferences/template', token)).body.data).toEqual(list.body.data);

      const patched = await widget('PATCH', `/preferences/${workflowId}`, token, { channel: { type: 'email', enabled: false } });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.data).toMatchObject({ template: { _id: workflowId }, preference: { channels: { in_app: true, email: false } } });
      const serverView = await server.request('GET', '/v1/subscribers/w-prefs/preferences');
      expect(serverView.body.data.find((r: any) => r.template._id === workflowId).preference.channels).toEqual({ in_app: true, email: false });

      const global = await widget('GET', '/preferences/global', token);
      expect(global.status).toBe(200);
      expect(global.body.data).toEqual([{ preference: { enabled: true, channels: expect.objectContaining({ in_app: true, email: true }) } }]);
      // @novu/client sends each entry's channelType too.
      const globalPatch = await widget('PATCH', '/preferences', token, { preferences: [{ type: 'sms', channelType: 'sms', enabled: false }] });
      expect(globalPatch.status, globalPatch.text).toBe(200);
      expect(globalPatch.body.data.preference.channels.sms).toBe(false);
      expect((await widget('GET', '/preferences/global', token)).body.data[0].preference.channels.sms).toBe(false);
    });

    it('bad preference input is a 4xx with a message and changes nothing', async () => {
      expectJsonError(await widget('PATCH', `/preferences/${workflowId}`, token, { channel: { type: 'pigeon', enabled: false } }), 400);
      expectJsonError(await widget('PATCH', `/preferences/${workflowId}`, token, { channel: { type: 'email', enabled: 'no' } }), 400);
      expectJsonError(await widget('PATCH', '/preferences/0123456789abcdef01234567', token, { channel: { type: 'email', enabled: false } }), 404);
      expectJsonError(await widget('PATCH', '/preferences', token, { preferences: [{ type: 'email' }] }), 400);
      expectJsonError(await widget('GET', '/preferences/everything', token), 400);
      const row = (await widget('GET', '/preferences', token)).body.data.find((r: any) => r.template._id === workflowId);
      expect(row.preference.channels).toEqual({ in_app: true, email: false });
    });
  });
});

describe('widget rate limits (the Inbox’s)', () => {
  let server: TestServer;
  let identifier: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { HERALD_RATE_LIMIT_WINDOW_SECONDS: '3600', HERALD_RATE_LIMIT_INBOX: '3', HERALD_RATE_LIMIT_INBOX_SESSION: '3' } });
    identifier = (await server.request('GET', '/v1/environments/me')).body.data.identifier;
    expect((await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', name: 'In-app', active: true } })).status).toBe(201);
  });
  afterAll(async () => server?.close());

  const session = (subscriberId: string) =>
    server.request('POST', '/v1/widgets/session/initialize', { key: null, body: { applicationIdentifier: identifier, subscriberId, hmacHash: null } });

  it('limits each subscriber on its own (429 JSON with a message), and the session route per application identifier', async () => {
    const first = (await session('limited-a')).body.data.token as string;
    const second = (await session('limited-b')).body.data.token as string;
    for (let i = 0; i < 3; i++) expect((await server.request('GET', '/v1/widgets/notifications/unseen', { bearer: first })).status).toBe(200);
    const limited = await server.request('GET', '/v1/widgets/notifications/feed', { bearer: first });
    expect(limited.status).toBe(429);
    expectErrorBody(limited.body, 429, '/v1/widgets/notifications/feed');
    expect(limited.body.message).toBe('API rate limit exceeded');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await server.request('GET', '/v1/widgets/notifications/unseen', { bearer: second })).status).toBe(200);

    // Two sessions were made; the third fits the limit of 3, the fourth does not.
    expect((await session('limited-c')).status).toBe(201);
    const flood = await session('limited-d');
    expect(flood.status).toBe(429);
    expectErrorBody(flood.body, 429, '/v1/widgets/session/initialize');
    expect(await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'limited-d')).toBeUndefined();
  });
});
