import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message, Subscriber } from '../../src/domain/types.js';
import type { InboxEvent } from '../../src/realtime/ports.js';
import { recordRealtime } from '../helpers/realtime-recorder.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody, expectIsoTimestamp } from '../helpers/shape.js';
import { insertMessage } from '../helpers/factories.js';

/**
 * The /v1/inbox routes over real HTTP, as @novu/js 3.19.2 calls them (spec/inbox-client-protocol.md): the session,
 * the list and count encodings, every action, scoping (another subscriber's or environment's message is a 404),
 * HMAC, and state read back through the server-side GET /v1/messages.
 */
describe('the Inbox routes', () => {
  let server: TestServer;
  let devIdentifier: string;
  let prodIdentifier: string;
  const events: InboxEvent[] = [];

  const session = async (subscriberId: string, extra: Record<string, unknown> = {}, identifier = devIdentifier) =>
    server.request('POST', '/v1/inbox/session', {
      key: null,
      headers: { 'novu-api-version': '2024-06-26', 'novu-client-version': '@novu/js@3.19.2' },
      body: { applicationIdentifier: identifier, subscriber: { subscriberId, timezone: 'UTC' }, ...extra },
    });
  const tokenFor = async (subscriberId: string, identifier = devIdentifier) => {
    // The production environment has HMAC switched on by a test below: sign there.
    const hash = identifier === prodIdentifier ? { subscriberHash: createHmac('sha256', server.prodKey).update(subscriberId).digest('hex') } : {};
    const response = await session(subscriberId, hash, identifier);
    expect(response.status).toBe(201);
    return response.body.data.token as string;
  };
  const subscriberOf = async (subscriberId: string, environmentId = server.devEnvironmentId): Promise<Subscriber> =>
    (await server.deps.store.subscribers.findBySubscriberId(environmentId, subscriberId))!;
  const at = (minutes: number) => new Date(Date.parse('2026-03-01T10:00:00.000Z') + minutes * 60_000).toISOString();
  /** GET /v1/messages (ApiKey) for one message: the server-side view of what the Inbox changed. */
  const serverSide = async (subscriberId: string, id: string, key = server.devKey) => {
    const response = await server.request('GET', `/v1/messages?subscriberId=${subscriberId}&channel=in_app&limit=100`, { key });
    expect(response.status).toBe(200);
    return response.body.data.find((m: { _id: string }) => m._id === id);
  };
  // The client's request, with its headers.
  const inbox = (method: string, path: string, token: string, body?: unknown) =>
    server.request(method, `/v1/inbox${path}`, {
      bearer: token,
      headers: { 'content-type': 'application/json', 'novu-api-version': '2024-06-26', 'novu-client-version': '@novu/js@3.19.2' },
      ...(body === undefined ? {} : { body }),
    });

  beforeAll(async () => {
    server = await startTestServer({ env: { HERALD_INBOX_MAX_SNOOZE_HOURS: '48' } });
    devIdentifier = (await server.request('GET', '/v1/environments/me')).body.data.identifier;
    prodIdentifier = (await server.request('GET', '/v1/environments/me', { key: server.prodKey })).body.data.identifier;
    recordRealtime(server, events);
  });
  afterAll(async () => server?.close());

  describe('POST /v1/inbox/session', () => {
    it('creates the subscriber and answers the session shape of the protocol', async () => {
      const response = await server.request('POST', '/v1/inbox/session', {
        key: null,
        body: { applicationIdentifier: devIdentifier, subscriber: { subscriberId: 'session-new', firstName: 'Grace', email: 'grace@example.com', timezone: 'Europe/Paris' } },
      });
      expect(response.status).toBe(201);
      expect(response.body.data).toEqual({
        token: expect.any(String),
        unreadCount: { total: 0, severity: { high: 0, medium: 0, low: 0, none: 0 } },
        removeNovuBranding: true,
        isDevelopmentMode: false,
        maxSnoozeDurationHours: 48,
        applicationIdentifier: devIdentifier,
      });
      const stored = await subscriberOf('session-new');
      expect(stored).toMatchObject({ firstName: 'Grace', email: 'grace@example.com', timezone: 'Europe/Paris' });
      // A second session updates the profile.
      await server.request('POST', '/v1/inbox/session', {
        key: null,
        body: { applicationIdentifier: devIdentifier, subscriber: { subscriberId: 'session-new', lastName: 'Hopper' } },
      });
      expect(await subscriberOf('session-new')).toMatchObject({ _id: stored._id, firstName: 'Grace', lastName: 'Hopper' });
    });

    it('counts the unread bell by severity', async () => {
      await tokenFor('session-count');
      const subscriber = await subscriberOf('session-count');
      await insertMessage(server.deps.store, subscriber, { severity: 'high' });
      await insertMessage(server.deps.store, subscriber, { severity: 'high' });
      await insertMessage(server.deps.store, subscriber, {});
      await insertMessage(server.deps.store, subscriber, { read: true, seen: true, severity: 'low' });
      const response = await session('session-count');
      expect(response.body.data.unreadCount).toEqual({ total: 3, severity: { high: 2, medium: 0, low: 0, none: 1 } });
    });

    it('refuses an unknown or empty application identifier and an empty subscriberId, creating nothing', async () => {
      for (const [body, field] of [
        [{ applicationIdentifier: 'nope-nope-nop', subscriber: { subscriberId: 'ghost' } }, 'applicationIdentifier'],
        [{ applicationIdentifier: '', subscriber: { subscriberId: 'ghost' } }, 'applicationIdentifier'],
        [{ applicationIdentifier: devIdentifier, subscriber: { subscriberId: '' } }, 'subscriber.subscriberId'],
        [{ applicationIdentifier: devIdentifier }, 'subscriber'],
      ] as const) {
        const response = await server.request('POST', '/v1/inbox/session', { key: null, body });
        expect(response.status).toBe(400);
        expectErrorBody(response.body, 400, '/v1/inbox/session');
        expect(JSON.stringify(response.body.message)).toContain(field);
      }
      expect(await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, 'ghost')).toBeUndefined();
    });

    it('requires the HMAC subscriberHash when the in-app integration has credentials.hmac, and refuses a wrong one', async () => {
      const created = await server.request('POST', '/v1/integrations', {
        key: server.prodKey,
        body: { providerId: 'novu', channel: 'in_app', name: 'Inbox', credentials: { hmac: true }, active: true },
      });
      expect(created.status).toBe(201);
      const hash = createHmac('sha256', server.prodKey).update('hmac-user').digest('hex');

      const missing = await session('hmac-user', {}, prodIdentifier);
      expect(missing.status).toBe(401);
      expect(missing.body.message).toContain('subscriberHash');
      const wrong = await session('hmac-user', { subscriberHash: createHmac('sha256', 'not-the-key').update('hmac-user').digest('hex') }, prodIdentifier);
      expect(wrong.status).toBe(401);
      const otherSubscriber = await session('hmac-user', { subscriberHash: createHmac('sha256', server.prodKey).update('someone-else').digest('hex') }, prodIdentifier);
      expect(otherSubscriber.status).toBe(401);
      expect(await server.deps.store.subscribers.findBySubscriberId(server.prodEnvironmentId, 'hmac-user')).toBeUndefined();

      const right = await session('hmac-user', { subscriberHash: hash }, prodIdentifier);
      expect(right.status).toBe(201);
      expect(await server.deps.store.subscribers.findBySubscriberId(server.prodEnvironmentId, 'hmac-user')).toBeDefined();
      // The development environment has no HMAC integration: no hash needed there.
      expect((await session('hmac-user')).status).toBe(201);
    });
  });

  describe('authentication and scope', () => {
    it('answers 401 without a token, with a bad token, with an API key and with a dashboard session token', async () => {
      const path = '/v1/inbox/notifications';
      const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer not-a-token' }, { authorization: `ApiKey ${server.devKey}` }, { authorization: `Bearer ${server.devSession}` }];
      for (const headers of attempts) {
        const response = await server.request('GET', path, { key: null, headers });
        expect(response.status).toBe(401);
        expectErrorBody(response.body, 401, path);
      }
    });

    it('a subscriber token cannot call any ApiKey route', async () => {
      const token = await tokenFor('scope-user');
      for (const [method, path] of [
        ['GET', '/v1/messages'],
        ['GET', '/v1/subscribers'],
        ['GET', '/v1/environments/me'],
        ['POST', '/v1/events/trigger'],
        ['GET', '/v1/integrations'],
      ]) {
        const response = await server.request(method, path, { bearer: token, ...(method === 'POST' ? { body: { name: 'x', to: 'scope-user' } } : {}) });
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(response.body.message).toBe('A subscriber session token can only call /v1/inbox routes');
      }
    });

    it("never reads or changes another subscriber's or another environment's message (404)", async () => {
      const mine = await tokenFor('owner-a');
      const other = await tokenFor('owner-b');
      const prodToken = await tokenFor('owner-a', prodIdentifier);
      const message = await insertMessage(server.deps.store, await subscriberOf('owner-a'), { createdAt: at(1) });

      expect((await inbox('GET', '/notifications', other)).body.data).toEqual([]);
      expect((await inbox('GET', '/notifications', prodToken)).body.data).toEqual([]);
      for (const token of [other, prodToken]) {
        for (const action of ['read', 'unread', 'seen', 'archive', 'unarchive', 'unsnooze']) {
          const response = await inbox('PATCH', `/notifications/${message._id}/${action}`, token);
          expect(response.status, action).toBe(404);
          expectErrorBody(response.body, 404);
        }
        const snooze = await inbox('PATCH', `/notifications/${message._id}/snooze`, token, { snoozeUntil: new Date(server.deps.clock.now() + 3600_000).toISOString() });
        expect(snooze.status).toBe(404);
        expect((await inbox('DELETE', `/notifications/${message._id}/delete`, token)).status).toBe(404);
        expect((await inbox('POST', '/notifications/seen', token, { notificationIds: [message._id] })).status).toBe(204);
        expect((await inbox('POST', '/notifications/read', token, { tags: [] })).status).toBe(204);
        expect((await inbox('POST', '/notifications/delete', token, {})).status).toBe(204);
      }
      const after = await serverSide('owner-a', message._id);
      expect(after).toMatchObject({ read: false, seen: false, archived: false });
      expect((await inbox('GET', '/notifications', mine)).body.data.map((n: { id: string }) => n.id)).toEqual([message._id]);
    });
  });

  describe('GET /v1/inbox/notifications', () => {
    let token: string;
    let subscriber: Subscriber;
    const messages: Message[] = [];
    beforeAll(async () => {
      token = await tokenFor('list-user');
      subscriber = await subscriberOf('list-user');
      for (let i = 0; i < 25; i++) {
        messages.push(
          await insertMessage(server.deps.store, subscriber, {
            createdAt: at(i),
            tags: i % 5 === 0 ? ['billing'] : i % 5 === 1 ? ['billing', 'urgent'] : i % 5 === 2 ? ['security'] : [],
            severity: i % 4 === 0 ? 'high' : undefined,
            data: { index: i, kind: i % 2 === 0 ? 'even' : 'odd' },
            read: i >= 20,
            seen: i >= 20,
            cta: { type: 'redirect', data: { url: '/orders' }, action: { status: 'pending', buttons: [{ type: 'primary', content: 'Open', url: '/open' }] } },
          }),
        );
      }
    });
    const ids = (body: { data: Array<{ id: string }> }) => body.data.map((n) => n.id);
    const newestFirst = () => [...messages].reverse().map((m) => m._id);

    it('answers the unwrapped {data, hasMore, filter} with the notification shape of the protocol', async () => {
      const response = await inbox('GET', '/notifications?limit=10&archived=false&snoozed=false', token);
      expect(response.status).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(['data', 'filter', 'hasMore']);
      expect(response.body.hasMore).toBe(true);
      expect(response.body.filter).toEqual({ archived: false, snoozed: false });
      const first = response.body.data[0];
      expect(first).toMatchObject({
        id: messages[24]._id,
        transactionId: messages[24].transactionId,
        subject: 'Welcome',
        body: 'Hello Ada',
        to: { id: subscriber._id, subscriberId: 'list-user' },
        isRead: true,
        isSeen: true,
        isArchived: false,
        isSnoozed: false,
        snoozedUntil: null,
        deliveredAt: [at(24)],
        createdAt: at(24),
        firstSeenAt: null,
        archivedAt: null,
        channelType: 'in_app',
        tags: [],
        data: { index: 24, kind: 'even' },
        severity: 'high',
        redirect: { url: '/orders' },
        primaryAction: { label: 'Open', isCompleted: false, redirect: { url: '/open' } },
      });
      expect(first.secondaryAction).toBeUndefined();
    });

    it('pages with the after cursor and with offset, newest first', async () => {
      const all = newestFirst();
      const first = await inbox('GET', '/notifications?limit=10', token);
      expect(ids(first.body)).toEqual(all.slice(0, 10));
      const second = await inbox('GET', `/notifications?limit=10&after=${all[9]}`, token);
      expect(ids(second.body)).toEqual(all.slice(10, 20));
      expect(second.body.hasMore).toBe(true);
      const third = await inbox('GET', `/notifications?limit=10&after=${all[19]}`, token);
      expect(ids(third.body)).toEqual(all.slice(20));
      expect(third.body.hasMore).toBe(false);
      const offset = await inbox('GET', '/notifications?limit=5&offset=3', token);
      expect(ids(offset.body)).toEqual(all.slice(3, 8));
      const unknownCursor = await inbox('GET', '/notifications?after=aaaaaaaaaaaaaaaaaaaaaaaa', token);
      expect(unknownCursor.status).toBe(400);
      expect(JSON.stringify(unknownCursor.body.message)).toContain('after');
    });

    it('filters by read/seen, tags (OR and AND forms), severity, data and creation time', async () => {
      const expectIds = async (query: string, predicate: (m: Message, i: number) => boolean) => {
        const response = await inbox('GET', `/notifications?limit=100&${query}`, token);
        expect(response.status, query).toBe(200);
        expect(ids(response.body), query).toEqual(newestFirst().filter((id) => { const i = messages.findIndex((m) => m._id === id); return predicate(messages[i], i); }));
      };
      await expectIds('read=false', (_m, i) => i < 20);
      await expectIds('seen=true', (_m, i) => i >= 20);
      await expectIds('tags[]=billing', (_m, i) => i % 5 === 0 || i % 5 === 1);
      await expectIds('tags[]=urgent&tags[]=security', (_m, i) => i % 5 === 1 || i % 5 === 2);
      await expectIds('tags[0][]=billing&tags[1][]=urgent', (_m, i) => i % 5 === 1);
      await expectIds('tags[0][]=billing&tags[0][]=security&tags[1][]=urgent', (_m, i) => i % 5 === 1);
      await expectIds('severity=high', (_m, i) => i % 4 === 0);
      await expectIds('severity[]=high&severity[]=none', () => true);
      await expectIds('severity[]=none', (_m, i) => i % 4 !== 0);
      await expectIds(`data=${encodeURIComponent(JSON.stringify({ kind: 'odd' }))}`, (_m, i) => i % 2 === 1);
      await expectIds(`createdGte=${Date.parse(at(5))}&createdLte=${Date.parse(at(7))}`, (_m, i) => i >= 5 && i <= 7);
      const paged = await inbox('GET', `/notifications?limit=3&data=${encodeURIComponent(JSON.stringify({ kind: 'odd' }))}`, token);
      expect(ids(paged.body)).toEqual([messages[23]._id, messages[21]._id, messages[19]._id]);
      expect(paged.body.hasMore).toBe(true);
    });

    it('refuses bad query values with a 400 naming the field', async () => {
      for (const [query, field] of [
        ['limit=0', 'limit'],
        ['limit=101', 'limit'],
        ['read=maybe', 'read'],
        ['severity=urgent', 'severity'],
        ['data=not-json', 'data'],
        ['data=%5B1%5D', 'data'],
        ['createdGte=soon', 'createdGte'],
      ]) {
        const response = await inbox('GET', `/notifications?${query}`, token);
        expect(response.status, query).toBe(400);
        expect(JSON.stringify(response.body.message), query).toContain(field);
      }
    });

    it('GET /count answers one unwrapped entry per JSON filter, each echoed as sent', async () => {
      const filters = [
        { read: false, archived: false, snoozed: false, severity: 'high' },
        { read: false, archived: false, snoozed: false, severity: 'none' },
        { tags: ['billing'] },
        { tags: { and: [{ or: ['billing'] }, { or: ['urgent'] }] }, data: { kind: 'odd' } },
        { seen: true, createdGte: Date.parse(at(22)) },
        {},
      ];
      const response = await inbox('GET', `/notifications/count?filters=${encodeURIComponent(JSON.stringify(filters))}`, token);
      expect(response.status).toBe(200);
      expect(response.text).toBe(
        JSON.stringify({
          data: [
            { count: 5, filter: filters[0] },
            { count: 15, filter: filters[1] },
            { count: 10, filter: filters[2] },
            { count: 3, filter: filters[3] },
            { count: 3, filter: filters[4] },
            { count: 25, filter: filters[5] },
          ],
        }),
      );
      for (const bad of ['not-json', '{"read":false}', '[{"read":"no"}]', '[{"colour":"red"}]', '[{"tags":[1]}]']) {
        const refused = await inbox('GET', `/notifications/count?filters=${encodeURIComponent(bad)}`, token);
        expect(refused.status, bad).toBe(400);
        expect(JSON.stringify(refused.body.message), bad).toContain('filters');
      }
    });
  });

  describe('actions', () => {
    let token: string;
    let subscriber: Subscriber;
    beforeAll(async () => {
      token = await tokenFor('action-user');
      subscriber = await subscriberOf('action-user');
    });
    const create = (overrides: Partial<Message> = {}) =>
      insertMessage(server.deps.store, subscriber, {
        cta: { action: { status: 'pending', buttons: [{ type: 'primary', content: 'Accept' }, { type: 'secondary', content: 'Decline' }] } },
        ...overrides,
      });
    const changedEvents = () => events.filter((e) => e.kind === 'messages-changed' && e.audience.subscriberRecordId === subscriber._id).length;

    it('read, unread, seen answer the updated notification and are read back through GET /v1/messages', async () => {
      const message = await create();
      const before = changedEvents();
      const read = await inbox('PATCH', `/notifications/${message._id}/read`, token);
      expect(read.status).toBe(200);
      expect(read.body.data).toMatchObject({ id: message._id, isRead: true, isSeen: true });
      expectIsoTimestamp(read.body.data.readAt);
      expect(read.body.data.firstSeenAt).toBe(read.body.data.readAt);
      expect(await serverSide('action-user', message._id)).toMatchObject({ read: true, seen: true, lastReadDate: read.body.data.readAt, firstSeenDate: read.body.data.readAt });

      const unread = await inbox('PATCH', `/notifications/${message._id}/unread`, token);
      expect(unread.body.data).toMatchObject({ isRead: false, isSeen: true, readAt: null });
      expect(await serverSide('action-user', message._id)).toMatchObject({ read: false, seen: true });

      const other = await create();
      const seen = await inbox('PATCH', `/notifications/${other._id}/seen`, token);
      expect(seen.body.data).toMatchObject({ isRead: false, isSeen: true });
      expect(await serverSide('action-user', other._id)).toMatchObject({ read: false, seen: true });
      expect(changedEvents() - before).toBe(3);
    });

    it('archive and unarchive', async () => {
      const message = await create();
      const archived = await inbox('PATCH', `/notifications/${message._id}/archive`, token);
      expect(archived.body.data).toMatchObject({ isArchived: true, isRead: true });
      expectIsoTimestamp(archived.body.data.archivedAt);
      expect(await serverSide('action-user', message._id)).toMatchObject({ archived: true, archivedAt: archived.body.data.archivedAt, read: true });
      const list = await inbox('GET', '/notifications?archived=true', token);
      expect(list.body.data.map((n: { id: string }) => n.id)).toContain(message._id);
      const unarchived = await inbox('PATCH', `/notifications/${message._id}/unarchive`, token);
      expect(unarchived.body.data).toMatchObject({ isArchived: false, archivedAt: null });
      expect(await serverSide('action-user', message._id)).toMatchObject({ archived: false });
    });

    it('snooze hides the notification from the feed until unsnoozed; the end is scheduled; limits are enforced', async () => {
      const message = await create({ createdAt: new Date(server.deps.clock.now()).toISOString() });
      const until = new Date(server.deps.clock.now() + 3600_000).toISOString();
      const snoozed = await inbox('PATCH', `/notifications/${message._id}/snooze`, token, { snoozeUntil: until });
      expect(snoozed.status).toBe(200);
      expect(snoozed.body.data).toMatchObject({ isSnoozed: true, snoozedUntil: until });
      expect(await serverSide('action-user', message._id)).toMatchObject({ snoozedUntil: until });
      const feed = await inbox('GET', '/notifications?archived=false&snoozed=false&limit=100', token);
      expect(feed.body.data.map((n: { id: string }) => n.id)).not.toContain(message._id);
      const snoozedList = await inbox('GET', '/notifications?snoozed=true', token);
      expect(snoozedList.body.data.map((n: { id: string }) => n.id)).toEqual([message._id]);

      const unsnoozed = await inbox('PATCH', `/notifications/${message._id}/unsnooze`, token);
      expect(unsnoozed.body.data).toMatchObject({ isSnoozed: false, snoozedUntil: null });
      expect(unsnoozed.body.data.deliveredAt).toHaveLength(2);
      expect((await serverSide('action-user', message._id)).snoozedUntil).toBeUndefined();

      for (const [snoozeUntil, text] of [
        [new Date(server.deps.clock.now() - 1000).toISOString(), 'future'],
        [new Date(server.deps.clock.now() + 49 * 3600_000).toISOString(), '48 hours'],
        ['tomorrow', 'ISO 8601'],
      ]) {
        const refused = await inbox('PATCH', `/notifications/${message._id}/snooze`, token, { snoozeUntil });
        expect(refused.status, snoozeUntil).toBe(400);
        expect(JSON.stringify(refused.body.message)).toContain(text);
      }
      expect((await inbox('PATCH', `/notifications/${message._id}/snooze`, token)).status).toBe(400);
    });

    it('complete and revert set the action status and result', async () => {
      const message = await create();
      const completed = await inbox('PATCH', `/notifications/${message._id}/complete`, token, { actionType: 'primary' });
      expect(completed.status).toBe(200);
      expect(completed.body.data.primaryAction).toEqual({ label: 'Accept', isCompleted: true });
      expect(completed.body.data.secondaryAction).toEqual({ label: 'Decline', isCompleted: false });
      expect((await serverSide('action-user', message._id)).cta.action).toMatchObject({ status: 'done', result: { type: 'primary' } });
      const reverted = await inbox('PATCH', `/notifications/${message._id}/revert`, token, { actionType: 'primary' });
      expect(reverted.body.data.primaryAction).toEqual({ label: 'Accept', isCompleted: false });
      expect((await serverSide('action-user', message._id)).cta.action).toMatchObject({ status: 'pending', result: { type: 'primary' } });

      const plain = await create({ cta: {} });
      const refused = await inbox('PATCH', `/notifications/${plain._id}/complete`, token, { actionType: 'primary' });
      expect(refused.status).toBe(400);
      expect((await inbox('PATCH', `/notifications/${message._id}/complete`, token, { actionType: 'tertiary' })).status).toBe(400);
    });

    it('the bulk POSTs: seen by ids, read all, archive all, archive read, delete all (with tags and the twice-encoded data)', async () => {
      const bulkToken = await tokenFor('bulk-user');
      const bulkSubscriber = await subscriberOf('bulk-user');
      const make = (overrides: Partial<Message>) => insertMessage(server.deps.store, bulkSubscriber, overrides);
      const a = await make({ tags: ['billing'], data: { team: 'x' } });
      const b = await make({ tags: ['billing'], data: { team: 'y' } });
      const c = await make({ tags: ['news'] });
      const state = async (id: string) => serverSide('bulk-user', id);

      expect((await inbox('POST', '/notifications/seen', bulkToken, { notificationIds: [a._id, c._id] })).status).toBe(204);
      expect(await state(a._id)).toMatchObject({ seen: true, read: false });
      expect(await state(b._id)).toMatchObject({ seen: false });

      expect((await inbox('POST', '/notifications/read', bulkToken, { tags: ['billing'], data: JSON.stringify({ team: 'x' }) })).status).toBe(204);
      expect(await state(a._id)).toMatchObject({ read: true });
      expect(await state(b._id)).toMatchObject({ read: false });
      expect((await inbox('POST', '/notifications/read', bulkToken, { tags: [] })).status).toBe(204);
      expect(await state(b._id)).toMatchObject({ read: true });
      expect(await state(c._id)).toMatchObject({ read: true });

      await inbox('PATCH', `/notifications/${c._id}/unread`, bulkToken);
      expect((await inbox('POST', '/notifications/read-archive', bulkToken, {})).status).toBe(204);
      expect(await state(a._id)).toMatchObject({ archived: true });
      expect(await state(c._id)).toMatchObject({ archived: false });
      expect((await inbox('POST', '/notifications/archive', bulkToken, { tags: { or: ['news'] } })).status).toBe(204);
      expect(await state(c._id)).toMatchObject({ archived: true });

      expect((await inbox('POST', '/notifications/delete', bulkToken, { tags: ['billing'] })).status).toBe(204);
      expect(await state(a._id)).toBeUndefined();
      expect(await state(b._id)).toBeUndefined();
      expect(await state(c._id)).toBeDefined();
      expect((await inbox('POST', '/notifications/read', bulkToken, { data: 'not json' })).status).toBe(400);
    });

    it('DELETE /:id/delete removes it from the Inbox and from GET /v1/messages', async () => {
      const message = await create();
      const response = await inbox('DELETE', `/notifications/${message._id}/delete`, token);
      expect(response.status).toBe(204);
      expect(await serverSide('action-user', message._id)).toBeUndefined();
      expect((await inbox('PATCH', `/notifications/${message._id}/read`, token)).status).toBe(404);
      expect((await inbox('DELETE', `/notifications/${message._id}/delete`, token)).status).toBe(404);
      expect((await inbox('DELETE', '/notifications/not-an-id/delete', token)).status).toBe(404);
    });

    it('the server-side mark-as and delete announce the change to the subscriber', async () => {
      const message = await create();
      const before = changedEvents();
      const marked = await server.request('POST', '/v1/subscribers/action-user/messages/mark-as', { body: { messageId: message._id, markAs: 'read' } });
      expect(marked.status).toBe(201);
      expect((await inbox('GET', '/notifications?read=true&limit=100', token)).body.data.map((n: { id: string }) => n.id)).toContain(message._id);
      const deleted = await server.request('DELETE', `/v1/messages/${message._id}`);
      expect(deleted.status).toBe(200);
      expect(changedEvents() - before).toBe(2);
    });
  });

  it('a workflow trigger gives the in-app message its workflow tags and severity and its step data', async () => {
    const worker = await startTestServer({ worker: true });
    try {
      const workflow = await worker.request('POST', '/v2/workflows', {
        body: {
          workflowId: 'billing-alert',
          name: 'Billing alert',
          tags: ['billing'],
          severity: 'high',
          steps: [
            {
              name: 'Inbox',
              type: 'in_app',
              controlValues: {
                subject: 'Invoice {{ payload.n }}',
                body: 'Due soon',
                data: { invoice: '{{ payload.n }}' },
                primaryAction: { label: 'Pay', redirect: { url: '/pay' } },
              },
            },
          ],
        },
      });
      expect(workflow.status).toBe(201);
      const identifier = (await worker.request('GET', '/v1/environments/me')).body.data.identifier;
      const sessionResponse = await worker.request('POST', '/v1/inbox/session', { key: null, body: { applicationIdentifier: identifier, subscriber: { subscriberId: 'wf-user' } } });
      const token = sessionResponse.body.data.token;
      expect((await worker.request('POST', '/v1/events/trigger', { body: { name: 'billing-alert', to: 'wf-user', payload: { n: 7 } } })).status).toBe(201);
      await worker.waitForIdle();
      const list = await worker.request('GET', '/v1/inbox/notifications?tags[]=billing&severity=high', { bearer: token });
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0]).toMatchObject({
        subject: 'Invoice 7',
        body: 'Due soon',
        tags: ['billing'],
        severity: 'high',
        data: { invoice: '7' },
        primaryAction: { label: 'Pay', isCompleted: false, redirect: { url: '/pay' } },
        workflow: { identifier: 'billing-alert', name: 'Billing alert', critical: false, tags: ['billing'], severity: 'high' },
      });
      const messages = await worker.request('GET', '/v1/messages?subscriberId=wf-user');
      expect(messages.body.data[0]).toMatchObject({ tags: ['billing'], severity: 'high', data: { invoice: '7' }, archived: false });
    } finally {
      await worker.close();
    }
  });

  describe('preferences', () => {
    let workflowId: string;
    beforeAll(async () => {
      const created = await server.request('POST', '/v2/workflows', {
        body: {
          workflowId: 'prefs-flow',
          name: 'Prefs flow',
          tags: ['news'],
          severity: 'low',
          steps: [
            { name: 'Inbox', type: 'in_app', controlValues: { body: 'x' } },
            { name: 'Mail', type: 'email', controlValues: { subject: 's', body: 'b' } },
          ],
        },
      });
      expect(created.status).toBe(201);
      workflowId = created.body.data._id;
      await server.request('POST', '/v2/workflows', {
        body: { workflowId: 'prefs-critical', name: 'Critical', critical: true, steps: [{ name: 'Inbox', type: 'in_app', controlValues: { body: 'x' } }] },
      });
    });
    const workflowItem = (items: Array<{ level: string; workflow?: { identifier: string } }>) => items.find((p) => p.workflow?.identifier === 'prefs-flow');

    it('GET lists one global item and the non-critical workflows in the protocol shape', async () => {
      const token = await tokenFor('prefs-user');
      const response = await inbox('GET', '/preferences?criticality=nonCritical', token);
      expect(response.status).toBe(200);
      expect(response.body.data[0]).toEqual({ level: 'global', enabled: true, channels: { in_app: true, email: true, sms: true, chat: true, push: true } });
      expect(workflowItem(response.body.data)).toEqual({
        level: 'template',
        enabled: true,
        channels: { in_app: true, email: true },
        workflow: { id: workflowId, identifier: 'prefs-flow', name: 'Prefs flow', critical: false, tags: ['news'], severity: 'low' },
        overrides: [
          { channel: 'in_app', source: 'template' },
          { channel: 'email', source: 'template' },
        ],
      });
      expect(response.body.data.some((p: { workflow?: { identifier: string } }) => p.workflow?.identifier === 'prefs-critical')).toBe(false);
      const critical = await inbox('GET', '/preferences?criticality=critical', token);
      expect(critical.body.data.map((p: { workflow?: { identifier: string } }) => p.workflow?.identifier)).toEqual([undefined, 'prefs-critical']);
      const byTag = await inbox('GET', '/preferences?tags[]=other', token);
      expect(byTag.body.data).toHaveLength(1);
    });

    it('PATCH per workflow (by id or identifier), bulk and global write the same model as the server API, for the caller only', async () => {
      const token = await tokenFor('prefs-writer');
      const bystander = await tokenFor('prefs-bystander');
      const one = await inbox('PATCH', `/preferences/${workflowId}`, token, { email: false });
      expect(one.status).toBe(200);
      expect(one.body.data).toMatchObject({ level: 'template', channels: { in_app: true, email: false }, workflow: { id: workflowId } });
      const byIdentifier = await inbox('PATCH', '/preferences/prefs-flow', token, { in_app: false });
      expect(byIdentifier.body.data.channels).toEqual({ in_app: false, email: false });
      const serverSide = await server.request('GET', '/v2/subscribers/prefs-writer/preferences');
      expect(JSON.stringify(serverSide.body.data.workflows)).toContain('"in_app":false');

      const bulk = await inbox('PATCH', '/preferences/bulk', token, { preferences: [{ workflowId, in_app: true }] });
      expect(bulk.status).toBe(200);
      expect(bulk.body.data).toEqual([expect.objectContaining({ channels: { in_app: true, email: false } })]);

      const global = await inbox('PATCH', '/preferences', token, { sms: false });
      expect(global.body.data).toMatchObject({ level: 'global', channels: { sms: false, email: true } });
      const schedule = { isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] } } };
      const scheduled = await inbox('PATCH', '/preferences', token, { schedule });
      expect(scheduled.body.data.schedule).toEqual(schedule);
      expect((await inbox('GET', '/preferences/global', token)).body.data.schedule).toEqual(schedule);

      // The other subscriber sees the defaults.
      const untouched = await inbox('GET', '/preferences', bystander);
      expect(workflowItem(untouched.body.data)).toMatchObject({ channels: { in_app: true, email: true } });
      expect(untouched.body.data[0].channels.sms).toBe(true);
    });

    it('refuses unknown or critical workflows, bad schedules, and callers without a subscriber token', async () => {
      const token = await tokenFor('prefs-refused');
      expect((await inbox('PATCH', '/preferences/aaaaaaaaaaaaaaaaaaaaaaaa', token, { email: false })).status).toBe(404);
      expect((await inbox('PATCH', '/preferences/prefs-critical', token, { in_app: false })).status).toBe(400);
      const badSchedule = await inbox('PATCH', '/preferences', token, { schedule: { isEnabled: 'yes' } });
      expect(badSchedule.status).toBe(400);
      expect((await inbox('PATCH', '/preferences/bulk', token, { preferences: [] })).status).toBe(400);
      expect((await server.request('GET', '/v1/inbox/preferences')).status).toBe(401);
    });
  });

  it('accepts the bodiless PATCHes with Content-Type: application/json, as the client sends them', async () => {
    const token = await tokenFor('bodiless-user');
    const message = await insertMessage(server.deps.store, await subscriberOf('bodiless-user'));
    const response = await fetch(`${server.url}/v1/inbox/notifications/${message._id}/read`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
    // Outside the Inbox routes an empty JSON body is still refused.
    const elsewhere = await fetch(`${server.url}/v1/subscribers`, { method: 'POST', headers: { authorization: `ApiKey ${server.devKey}`, 'content-type': 'application/json' } });
    expect(elsewhere.status).toBe(400);
  });
});
