import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/api';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Every method of the `@novu/api` server SDK, accounted for (the `@novu/api` table in docs/novu-compatibility.md):
 * the lists below name each method (its path under `new Novu()`) as served or not served; the SDK's `funcs/` folder is
 * enumerated, so an SDK upgrade that adds a method fails here until it is placed. Each method's route (read from its
 * `funcs/*.js`) is requested: a served one is routed, a not-served one gets the route-level 404 (`Cannot <METHOD>`).
 * The methods served since session 29 are called through the SDK below, their effect read back.
 */

const SDK_DIR = fileURLToPath(new URL('../../node_modules/@novu/api/', import.meta.url));
const DOC = fileURLToPath(new URL('../../docs/novu-compatibility.md', import.meta.url));

/** Served; the ones first served in session 29 are exercised in this file, the others in the files named. */
const SERVED: Record<string, string> = {
  trigger: 'novu-sdk', triggerBulk: 'novu-sdk', triggerBroadcast: 'novu-sdk', cancel: 'novu-sdk',
  'environments.list': 'novu-sdk',
  'integrations.create': 'novu-sdk', 'integrations.list': 'novu-sdk', 'integrations.listActive': 'novu-sdk',
  'integrations.update': 'novu-sdk', 'integrations.setAsPrimary': 'novu-sdk', 'integrations.delete': 'novu-sdk',
  'messages.retrieve': 'novu-sdk', 'messages.delete': 'novu-sdk', 'messages.deleteByTransactionId': 'novu-sdk',
  'notifications.list': 'novu-sdk', 'notifications.retrieve': 'novu-sdk',
  'subscribers.create': 'novu-sdk', 'subscribers.createBulk': 'novu-sdk', 'subscribers.retrieve': 'novu-sdk',
  'subscribers.search': 'novu-sdk', 'subscribers.patch': 'novu-sdk', 'subscribers.delete': 'novu-sdk',
  'subscribers.properties.updateOnlineFlag': 'novu-sdk',
  'subscribers.credentials.update': 'novu-sdk', 'subscribers.credentials.append': 'novu-sdk', 'subscribers.credentials.delete': 'novu-sdk',
  'subscribers.messages.markAllAs': 'novu-sdk', 'subscribers.messages.markAll': 'novu-sdk',
  'subscribers.notifications.feed': 'novu-sdk', 'subscribers.notifications.unseenCount': 'novu-sdk',
  'subscribers.preferences.list': 'novu-preferences', 'subscribers.preferences.update': 'novu-preferences',
  'subscribers.preferences.bulkUpdate': 'novu-preferences',
  'topics.create': 'novu-sdk', 'topics.list': 'novu-sdk', 'topics.get': 'novu-sdk', 'topics.update': 'novu-sdk', 'topics.delete': 'novu-sdk',
  'topics.subscriptions.create': 'novu-sdk', 'topics.subscriptions.list': 'novu-sdk', 'topics.subscriptions.delete': 'novu-sdk',
  'topics.subscribers.retrieve': 'novu-sdk',
  'workflows.create': 'novu-sdk', 'workflows.list': 'novu-sdk', 'workflows.get': 'novu-sdk', 'workflows.update': 'novu-sdk',
  'workflows.patch': 'novu-sdk', 'workflows.delete': 'novu-sdk', 'workflows.steps.generatePreview': 'novu-sdk',
  // First served in session 29: exercised here.
  'subscribers.notifications.list': 'here', 'subscribers.notifications.count': 'here', 'subscribers.notifications.delete': 'here',
  'subscribers.notifications.markAsRead': 'here', 'subscribers.notifications.markAsUnread': 'here',
  'subscribers.notifications.archive': 'here', 'subscribers.notifications.unarchive': 'here',
  'subscribers.notifications.snooze': 'here', 'subscribers.notifications.unsnooze': 'here',
  'subscribers.notifications.completeAction': 'here', 'subscribers.notifications.revertAction': 'here',
  'subscribers.notifications.markAsSeen': 'here', 'subscribers.notifications.markAllAsRead': 'here',
  'subscribers.notifications.archiveAll': 'here', 'subscribers.notifications.archiveAllRead': 'here',
  'subscribers.notifications.deleteAll': 'here',
  'subscribers.topics.list': 'here', 'topics.subscriptions.getSubscription': 'here', 'workflows.steps.retrieve': 'here',
  'subscribers.messages.updateAsSeen': 'here', 'environments.getTags': 'here',
};

/** Not served: each method with the reason's key (the reasons are the docs table's). */
const NOT_SERVED: Record<string, string> = {
  'activity.track': 'delivery-reports',
  ...byArea('agents', ['create', 'list', 'retrieve', 'update', 'delete', 'updateBridge', 'sendReply', 'integrations.create', 'integrations.list', 'integrations.update', 'integrations.delete'], 'agents'),
  ...byArea('channelConnections', ['create', 'list', 'retrieve', 'update', 'delete'], 'channel-connections'),
  ...byArea('channelEndpoints', ['create', 'list', 'retrieve', 'update', 'delete'], 'channel-connections'),
  ...byArea('contexts', ['create', 'list', 'retrieve', 'update', 'delete'], 'contexts'),
  ...byArea('domains', ['create', 'list', 'retrieve', 'update', 'delete', 'verify', 'diagnose', 'autoConfigure.retrieve', 'autoConfigure.start', 'routes.create', 'routes.list', 'routes.retrieve', 'routes.update', 'routes.delete', 'routes.test'], 'domains'),
  ...byArea('environmentVariables', ['create', 'list', 'retrieve', 'update', 'delete', 'usage'], 'environment-variables'),
  'environments.create': 'environments', 'environments.update': 'environments', 'environments.delete': 'environments',
  'environments.diff': 'promotion', 'environments.publish': 'promotion', 'workflows.sync': 'promotion',
  'integrations.generateChatOAuthUrl': 'oauth', 'integrations.generateConnectOAuthUrl': 'oauth', 'integrations.generateLinkUserOAuthUrl': 'oauth',
  'integrations.linkChannelEndpoint': 'oauth', 'integrations.createMobileLink': 'oauth',
  'integrations.integrationsControllerAutoConfigureIntegration': 'provider-setup',
  'integrations.integrationsControllerConfigureIntegrationWebhook': 'provider-setup',
  ...byArea('layouts', ['create', 'list', 'retrieve', 'update', 'delete', 'duplicate', 'generatePreview', 'usage'], 'layouts'),
  'topics.subscriptions.update': 'subscription-preferences',
  ...byArea('translations', ['create', 'retrieve', 'delete', 'upload', 'groups.retrieve', 'groups.delete', 'master.retrieve', 'master.import', 'master.upload'], 'translations'),
};

function byArea(area: string, methods: string[], reason: string): Record<string, string> {
  return Object.fromEntries(methods.map((method) => [`${area}.${method}`, reason]));
}

/** Every SDK method's path under `new Novu()` and the `funcs/` function it calls (read from the method's source). */
function sdkMethods(): Map<string, string> {
  const found = new Map<string, string>();
  const seen = new Set<object>();
  const walk = (target: object, path: string[]) => {
    for (let proto = Object.getPrototypeOf(target); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        if (name === 'constructor' || name.startsWith('_')) continue;
        const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
        if (descriptor.get) {
          const child = (target as Record<string, unknown>)[name];
          if (child && typeof child === 'object' && !seen.has(child)) {
            seen.add(child);
            walk(child, [...path, name]);
          }
        } else if (typeof descriptor.value === 'function') {
          const called = /_js_1\.(\w+)\)\(this/.exec(String(descriptor.value));
          if (called) found.set([...path, name].join('.'), called[1]);
        }
      }
    }
  };
  walk(new Novu({ secretKey: 'unused', serverURL: 'http://127.0.0.1:9' }), []);
  return found;
}

/** A function's HTTP method and path template, as its `funcs/<name>.js` builds the request. */
function routeOf(func: string): { method: string; path: string } {
  const source = readFileSync(`${SDK_DIR}funcs/${func}.js`, 'utf8');
  const path = /pathToFunc\)\("([^"]+)"/.exec(source)?.[1];
  const method = /method: "([A-Z]+)"/.exec(source)?.[1];
  if (!path || !method) throw new Error(`no route found in funcs/${func}.js`);
  return { method, path };
}

describe('@novu/api: every method accounted for', () => {
  const methods = sdkMethods();

  it('reaches every function of funcs/ from exactly one SDK method', () => {
    const funcs = readdirSync(`${SDK_DIR}funcs`).filter((file) => file.endsWith('.js')).map((file) => file.slice(0, -3));
    expect(funcs.length).toBeGreaterThan(100);
    expect([...methods.values()].sort()).toEqual([...funcs].sort());
  });

  it('lists every SDK method as served or not served, never both, and nothing else', () => {
    const listed = [...Object.keys(SERVED), ...Object.keys(NOT_SERVED)];
    expect(new Set(listed).size).toBe(listed.length);
    const unplaced = [...methods.keys()].filter((path) => !(path in SERVED) && !(path in NOT_SERVED));
    expect(unplaced, 'SDK methods in neither list: place them (and in docs/novu-compatibility.md)').toEqual([]);
    expect(listed.filter((path) => !methods.has(path))).toEqual([]);
  });

  it('has each method in the docs table: served ones by name, not-served ones by name or by area (`area.*`)', () => {
    const doc = readFileSync(DOC, 'utf8');
    const start = doc.indexOf('### `@novu/api`');
    expect(start).toBeGreaterThan(-1);
    const end = doc.indexOf('\n## ', start);
    const section = doc.slice(start, end === -1 ? undefined : end);
    const named = new Set([...section.matchAll(/`([A-Za-z.*]+)`/g)].map((match) => match[1]));
    const missing = Object.keys(SERVED).filter((path) => !named.has(path));
    expect(missing, 'served methods missing from the table').toEqual([]);
    const covered = (path: string) => named.has(path) || path.split('.').some((_, index, parts) => index > 0 && named.has(`${parts.slice(0, index).join('.')}.*`));
    expect(Object.keys(NOT_SERVED).filter((path) => !covered(path)), 'not-served methods missing from the table').toEqual([]);
  });
});

let server: TestServer;
let novu: Novu;
let prodNovu: Novu;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  novu = new Novu({ secretKey: server.devKey, serverURL: server.url, retryConfig: { strategy: 'none' } });
  prodNovu = new Novu({ secretKey: server.prodKey, serverURL: server.url, retryConfig: { strategy: 'none' } });
});
afterAll(async () => {
  await server?.close();
});

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('@novu/api: each route served or not', () => {
  it('routes every served method and answers the route-level 404 to every not-served one', async () => {
    const methods = sdkMethods();
    const routed: string[] = [];
    const unrouted: string[] = [];
    for (const [path, func] of methods) {
      const route = routeOf(func);
      const url = route.path.replace(/\{[^}]+\}/g, 'probe');
      const response = await server.request(route.method, url, route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} });
      const routeLevel404 = response.status === 404 && response.body?.message === `Cannot ${route.method} ${url}`;
      (routeLevel404 ? unrouted : routed).push(path);
    }
    expect(routed.filter((path) => !(path in SERVED)), 'routed but listed as not served').toEqual([]);
    expect(unrouted.filter((path) => !(path in NOT_SERVED)), 'listed as served but not routed').toEqual([]);
  });
});

describe('@novu/api: subscriber notifications (/v2/subscribers/{id}/notifications)', () => {
  const subscriberId = 'cov-reader';

  /** Triggers `count` in-app notifications (the last `withContext` of them with context tenant:acme) and waits for them. */
  async function seed(count: number, withContext = 0, to = subscriberId): Promise<string[]> {
    const existing = (await novu.subscribers.notifications.list({ subscriberId: to, limit: 100 }).catch(() => undefined))?.result.data.length ?? 0;
    for (let index = 0; index < count; index++) {
      await novu.trigger({
        workflowId: 'cov-inbox',
        to,
        payload: { n: index },
        ...(index >= count - withContext ? { context: { tenant: 'acme' } } : {}),
      });
    }
    const page = await eventually(async () => {
      const listed = await novu.subscribers.notifications.list({ subscriberId: to, limit: 100 });
      return listed.result.data.length >= existing + count ? listed.result : undefined;
    });
    return page.data.slice(0, count).map((notification) => notification.id);
  }

  beforeAll(async () => {
    await novu.integrations.create({ providerId: 'novu', channel: 'in_app', active: true, check: false });
    await novu.subscribers.create({ subscriberId, firstName: 'Ada' });
    await novu.workflows.create({
      workflowId: 'cov-inbox',
      name: 'Coverage inbox',
      active: true,
      tags: ['billing'],
      steps: [
        {
          name: 'Inbox',
          type: 'in_app',
          controlValues: {
            subject: 'Invoice {{payload.n}}',
            body: 'Hello {{subscriber.firstName}} #{{payload.n}}',
            primaryAction: { label: 'Pay', redirect: { url: 'https://example.com/pay' } },
            secondaryAction: { label: 'Later' },
          },
        },
      ],
    });
  });

  it('lists newest first with the Inbox filters and pages with limit/after', async () => {
    const ids = await seed(3, 1);
    const all = await novu.subscribers.notifications.list({ subscriberId });
    expect(all.result.data).toHaveLength(3);
    expect(all.result.hasMore).toBe(false);
    expect(all.result.data[0]).toMatchObject({ body: 'Hello Ada #2', subject: 'Invoice 2', isRead: false, isSeen: false, channelType: 'in_app' });
    expect(all.result.data[0].to.subscriberId).toBe(subscriberId);
    expect(all.result.data[0].primaryAction).toMatchObject({ label: 'Pay', isCompleted: false });

    const first = await novu.subscribers.notifications.list({ subscriberId, limit: 2 });
    expect(first.result.data.map((n) => n.id)).toEqual(ids.slice(0, 2));
    expect(first.result.hasMore).toBe(true);
    const second = await novu.subscribers.notifications.list({ subscriberId, limit: 2, after: ids[1] });
    expect(second.result.data.map((n) => n.id)).toEqual([ids[2]]);

    const inContext = await novu.subscribers.notifications.list({ subscriberId, contextKeys: ['tenant:acme'] });
    expect(inContext.result.data.map((n) => n.id)).toEqual([ids[0]]);
    const otherContext = await novu.subscribers.notifications.list({ subscriberId, contextKeys: ['tenant:globex'] });
    expect(otherContext.result.data).toHaveLength(0);

    const counts = await novu.subscribers.notifications.count(subscriberId, JSON.stringify([{ read: false }, { read: true }, {}]));
    expect(counts.result.map((c) => c.count)).toEqual([3, 0, 3]);
    expect(counts.result[0].filter).toEqual({ read: false });
  });

  it('applies each single action and reads it back; a wrong contextKeys is a 404 that changes nothing', async () => {
    const [newest, middle, oldest] = (await novu.subscribers.notifications.list({ subscriberId })).result.data.map((n) => n.id);
    const read = await novu.subscribers.notifications.markAsRead({ subscriberId, notificationId: middle });
    expect(read.result).toMatchObject({ id: middle, isRead: true, isSeen: true });
    expect((await novu.subscribers.notifications.list({ subscriberId, read: true })).result.data.map((n) => n.id)).toEqual([middle]);
    const unread = await novu.subscribers.notifications.markAsUnread({ subscriberId, notificationId: middle });
    expect(unread.result.isRead).toBe(false);
    expect((await novu.subscribers.notifications.list({ subscriberId, read: true })).result.data).toHaveLength(0);

    await novu.subscribers.notifications.archive({ subscriberId, notificationId: oldest });
    expect((await novu.subscribers.notifications.list({ subscriberId, archived: true })).result.data.map((n) => n.id)).toEqual([oldest]);
    const unarchived = await novu.subscribers.notifications.unarchive({ subscriberId, notificationId: oldest });
    expect(unarchived.result.isArchived).toBe(false);

    const until = new Date(Date.now() + 60 * 60_000);
    const snoozed = await novu.subscribers.notifications.snooze({ subscriberId, notificationId: oldest, snoozeSubscriberNotificationDto: { snoozeUntil: until } });
    expect(snoozed.result).toMatchObject({ isSnoozed: true, snoozedUntil: until.toISOString() });
    expect((await novu.subscribers.notifications.list({ subscriberId, snoozed: true })).result.data.map((n) => n.id)).toEqual([oldest]);
    await novu.subscribers.notifications.unsnooze({ subscriberId, notificationId: oldest });
    expect((await novu.subscribers.notifications.list({ subscriberId, snoozed: true })).result.data).toHaveLength(0);

    const completed = await novu.subscribers.notifications.completeAction({ subscriberId, notificationId: newest, actionType: 'primary' });
    expect(completed.result.primaryAction).toMatchObject({ label: 'Pay', isCompleted: true });
    const reverted = await novu.subscribers.notifications.revertAction({ subscriberId, notificationId: newest, actionType: 'primary' });
    expect(reverted.result.primaryAction?.isCompleted).toBe(false);

    // `newest` carries tenant:acme, `middle` no context: asking in another context finds neither.
    await expect(novu.subscribers.notifications.markAsRead({ subscriberId, notificationId: middle, contextKeys: ['tenant:acme'] })).rejects.toMatchObject({ statusCode: 404 });
    await expect(novu.subscribers.notifications.archive({ subscriberId, notificationId: newest, contextKeys: ['tenant:globex'] })).rejects.toMatchObject({ statusCode: 404 });
    const after = (await novu.subscribers.notifications.list({ subscriberId })).result.data;
    // (archiving `oldest` above also marked it read, as Novu's archive does)
    expect(after.map((n) => [n.id, n.isRead, n.isArchived])).toEqual([[newest, false, false], [middle, false, false], [oldest, true, false]]);
    const inContext = await novu.subscribers.notifications.markAsRead({ subscriberId, notificationId: newest, contextKeys: ['tenant:acme'] });
    expect(inContext.result.isRead).toBe(true);
    await novu.subscribers.notifications.markAsUnread({ subscriberId, notificationId: newest });
  });

  it('applies the bulk actions to what they match and reads the effect back', async () => {
    const subscriberId = 'cov-bulk';
    await novu.subscribers.create({ subscriberId, firstName: 'Bo' });
    const [newest, middle] = await seed(3, 1, subscriberId);
    await novu.subscribers.notifications.markAsSeen({ notificationIds: [middle] }, subscriberId);
    expect((await novu.subscribers.notifications.list({ subscriberId, seen: true })).result.data.map((n) => n.id)).toEqual([middle]);

    await novu.subscribers.notifications.markAllAsRead({ contextKeys: ['tenant:acme'] }, subscriberId);
    expect((await novu.subscribers.notifications.list({ subscriberId, read: true })).result.data.map((n) => n.id)).toEqual([newest]);
    await novu.subscribers.notifications.archiveAllRead({}, subscriberId);
    expect((await novu.subscribers.notifications.list({ subscriberId, archived: true })).result.data.map((n) => n.id)).toEqual([newest]);

    await novu.subscribers.notifications.markAllAsRead({}, subscriberId);
    const counts = await novu.subscribers.notifications.count(subscriberId, JSON.stringify([{ read: false }, { archived: false }]));
    expect(counts.result.map((c) => c.count)).toEqual([0, 2]);
    await novu.subscribers.notifications.archiveAll({}, subscriberId);
    expect((await novu.subscribers.notifications.count(subscriberId, JSON.stringify([{ archived: true }]))).result[0].count).toBe(3);

    await novu.subscribers.notifications.delete({ subscriberId, notificationId: middle });
    const remaining = (await novu.subscribers.notifications.list({ subscriberId })).result.data.map((n) => n.id);
    expect(remaining).toHaveLength(2);
    expect(remaining).not.toContain(middle);
    await expect(novu.subscribers.notifications.delete({ subscriberId, notificationId: middle })).rejects.toMatchObject({ statusCode: 404 });
    await novu.subscribers.notifications.deleteAll({}, subscriberId);
    expect((await novu.subscribers.notifications.list({ subscriberId })).result.data).toHaveLength(0);
  });

  it('completes and reverts a button through the v1 action route (subscribers.messages.updateAsSeen)', async () => {
    const [id] = await seed(1);
    // (the SDK's zod schema for `payload` is an empty object: it sends none; @novu/node's test covers the payload)
    const done = await novu.subscribers.messages.updateAsSeen({ subscriberId, messageId: id, type: 'secondary', markMessageActionAsSeenDto: { status: 'done' } });
    expect(done.result.cta.action).toMatchObject({ status: 'done', result: { type: 'secondary' } });
    const [listed] = (await novu.subscribers.notifications.list({ subscriberId })).result.data;
    expect(listed.secondaryAction).toMatchObject({ label: 'Later', isCompleted: true });
    await novu.subscribers.messages.updateAsSeen({ subscriberId, messageId: id, type: 'secondary', markMessageActionAsSeenDto: { status: 'pending' } });
    expect((await novu.subscribers.notifications.list({ subscriberId })).result.data[0].secondaryAction?.isCompleted).toBe(false);
    await expect(prodNovu.subscribers.messages.updateAsSeen({ subscriberId, messageId: id, type: 'secondary', markMessageActionAsSeenDto: { status: 'done' } })).rejects.toMatchObject({ statusCode: 404 });
  });

  it('answers 404 for an unknown subscriber, one of another environment, or another subscriber\'s notification', async () => {
    const [id] = await seed(1);
    await novu.subscribers.create({ subscriberId: 'cov-other' });
    await expect(novu.subscribers.notifications.list({ subscriberId: 'cov-nobody' })).rejects.toMatchObject({ statusCode: 404 });
    await expect(prodNovu.subscribers.notifications.list({ subscriberId })).rejects.toMatchObject({ statusCode: 404 });
    await expect(prodNovu.subscribers.notifications.markAsRead({ subscriberId, notificationId: id })).rejects.toMatchObject({ statusCode: 404 });
    await expect(prodNovu.subscribers.notifications.deleteAll({}, subscriberId)).rejects.toMatchObject({ statusCode: 404 });
    await expect(novu.subscribers.notifications.markAsRead({ subscriberId: 'cov-other', notificationId: id })).rejects.toMatchObject({ statusCode: 404 });
    const raw = await server.request('GET', `/v2/subscribers/cov-nobody/notifications`);
    expect(raw.body).toMatchObject({ statusCode: 404, error: 'Not Found', message: 'Subscriber: cov-nobody was not found', path: '/v2/subscribers/cov-nobody/notifications' });
    const [after] = (await novu.subscribers.notifications.list({ subscriberId })).result.data;
    expect(after).toMatchObject({ id, isRead: false });
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const [id] = (await novu.subscribers.notifications.list({ subscriberId })).result.data.map((n) => n.id);
    const cases: Array<[string, string, unknown, string]> = [
      ['GET', `/v2/subscribers/${subscriberId}/notifications?limit=0`, undefined, 'limit'],
      ['GET', `/v2/subscribers/${subscriberId}/notifications?contextKeys=acme`, undefined, 'type:id'],
      ['GET', `/v2/subscribers/${subscriberId}/notifications/count?filters=nope`, undefined, 'filters'],
      ['GET', `/v2/subscribers/${subscriberId}/notifications/count`, undefined, 'filters'],
      ['PATCH', `/v2/subscribers/${subscriberId}/notifications/${id}/snooze`, { snoozeUntil: '2000-01-01T00:00:00.000Z' }, 'snoozeUntil'],
      ['PATCH', `/v2/subscribers/${subscriberId}/notifications/${id}/actions/tertiary/complete`, {}, 'actionType'],
      ['POST', `/v2/subscribers/${subscriberId}/notifications/read`, { data: '[1]' }, 'data'],
      ['POST', `/v2/subscribers/${subscriberId}/notifications/delete`, { contextKeys: ['bad'] }, 'type:id'],
    ];
    for (const [method, path, body, field] of cases) {
      const response = await server.request(method, path, body === undefined ? {} : { body });
      expect(response.status, `${method} ${path}`).toBe(400);
      expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(JSON.stringify(response.body.message), `${method} ${path}`).toContain(field);
    }
    const [after] = (await novu.subscribers.notifications.list({ subscriberId })).result.data;
    expect(after).toMatchObject({ id, isRead: false, isSnoozed: false });
  });
});

describe('@novu/api: topic subscriptions of a subscriber, one subscription', () => {
  beforeAll(async () => {
    await novu.subscribers.create({ subscriberId: 'cov-member' });
    for (const key of ['cov-a', 'cov-b', 'cov-c']) await novu.topics.subscriptions.create({ subscriptions: ['cov-member'] }, key);
    await prodNovu.subscribers.create({ subscriberId: 'cov-member' });
  });

  it('lists the subscriber\'s subscriptions with cursor paging, key and contextKeys filters', async () => {
    const first = await novu.subscribers.topics.list({ subscriberId: 'cov-member', limit: 2 });
    expect(first.result.data.map((s) => s.topic.key)).toEqual(['cov-a', 'cov-b']);
    expect(first.result).toMatchObject({ totalCount: 3, next: expect.any(String) });
    expect(first.result.data[0]).toMatchObject({ identifier: 'cov-a:cov-member', subscriber: { subscriberId: 'cov-member' } });
    const second = await novu.subscribers.topics.list({ subscriberId: 'cov-member', limit: 2, after: first.result.next! });
    expect(second.result.data.map((s) => s.topic.key)).toEqual(['cov-c']);
    expect(second.result.next).toBeNull();
    const desc = await novu.subscribers.topics.list({ subscriberId: 'cov-member', orderDirection: 'DESC' as never });
    expect(desc.result.data.map((s) => s.topic.key)).toEqual(['cov-c', 'cov-b', 'cov-a']);
    const one = await novu.subscribers.topics.list({ subscriberId: 'cov-member', key: 'cov-b' });
    expect(one.result).toMatchObject({ totalCount: 1 });
    expect(one.result.data.map((s) => s.topic.key)).toEqual(['cov-b']);
    const inContext = await novu.subscribers.topics.list({ subscriberId: 'cov-member', contextKeys: ['tenant:acme'] });
    expect(inContext.result.data).toHaveLength(0);

    await novu.topics.subscriptions.delete({ subscriptions: ['cov-member'] }, 'cov-b');
    const afterRemoval = await novu.subscribers.topics.list({ subscriberId: 'cov-member' });
    expect(afterRemoval.result.data.map((s) => s.topic.key)).toEqual(['cov-a', 'cov-c']);

    // The same subscriberId in the production environment has no subscriptions: nothing leaks across environments.
    expect((await prodNovu.subscribers.topics.list({ subscriberId: 'cov-member' })).result.data).toHaveLength(0);
    await expect(novu.subscribers.topics.list({ subscriberId: 'cov-nobody' })).rejects.toMatchObject({ statusCode: 404 });
    const before = await server.request('GET', '/v2/subscribers/cov-member/subscriptions?before=x');
    expect(before.status).toBe(400);
  });

  it('reads one subscription by the identifier its creation answered', async () => {
    const created = await novu.topics.subscriptions.create({ subscriptions: ['cov-member'] }, 'cov-d');
    const identifier = created.result.data[0].identifier!;
    const subscription = await novu.topics.subscriptions.getSubscription('cov-d', identifier);
    expect(subscription.result).toEqual({ id: created.result.data[0].id, identifier });
    await expect(novu.topics.subscriptions.getSubscription('cov-d', 'cov-d:cov-nobody')).rejects.toMatchObject({ statusCode: 404 });
    await expect(novu.topics.subscriptions.getSubscription('cov-a', identifier)).rejects.toMatchObject({ statusCode: 404 });
    await expect(prodNovu.topics.subscriptions.getSubscription('cov-d', identifier)).rejects.toMatchObject({ statusCode: 404 });
    await novu.topics.subscriptions.delete({ subscriptions: ['cov-member'] }, 'cov-d');
    await expect(novu.topics.subscriptions.getSubscription('cov-d', identifier)).rejects.toMatchObject({ statusCode: 404 });
  });
});

describe('@novu/api: one workflow step', () => {
  it('retrieves a stored step by stepId or _id, as the workflow shows it; 404 otherwise', async () => {
    await novu.workflows.create({
      workflowId: 'cov-steps',
      name: 'Steps',
      steps: [
        { name: 'Email', type: 'email', controlValues: { subject: 'Hi', body: 'Hello' } },
        { name: 'Wait', type: 'delay', controlValues: { amount: 5, unit: 'minutes' } },
      ],
    });
    const workflow = (await novu.workflows.get('cov-steps')).result;
    const stored = workflow.steps[1];
    const bySlug = await novu.workflows.steps.retrieve('cov-steps', stored.stepId);
    expect(bySlug.result).toMatchObject({ id: stored.id, stepId: stored.stepId, name: 'Wait', type: 'delay', workflowId: 'cov-steps', workflowDatabaseId: workflow.id });
    expect(bySlug.result.controlValues).toMatchObject({ amount: 5, unit: 'minutes' });
    const byId = await novu.workflows.steps.retrieve(workflow.id, stored.id);
    expect(byId.result.stepId).toBe(stored.stepId);
    await expect(novu.workflows.steps.retrieve('cov-steps', 'no-such-step')).rejects.toMatchObject({ statusCode: 404 });
    await expect(novu.workflows.steps.retrieve('no-such-workflow', stored.stepId)).rejects.toMatchObject({ statusCode: 404 });
    await expect(prodNovu.workflows.steps.retrieve('cov-steps', stored.stepId)).rejects.toMatchObject({ statusCode: 404 });
  });
});

describe('@novu/api: the environment\'s workflow tags', () => {
  it('lists each tag of the environment\'s workflows once, sorted, by _id or identifier; another environment is a 404', async () => {
    await novu.workflows.create({ workflowId: 'cov-tags-1', name: 'Tags 1', tags: ['zeta', 'alerts'], steps: [{ name: 'Inbox', type: 'in_app', controlValues: { body: 'x' } }] });
    await novu.workflows.create({ workflowId: 'cov-tags-2', name: 'Tags 2', tags: ['alerts', 'beta'], steps: [{ name: 'Inbox', type: 'in_app', controlValues: { body: 'x' } }] });
    await prodNovu.workflows.create({ workflowId: 'cov-tags-prod', name: 'Prod', tags: ['prod-only'], steps: [{ name: 'Inbox', type: 'in_app', controlValues: { body: 'x' } }] });
    const names = (await novu.environments.getTags(server.devEnvironmentId)).result.map((tag) => tag.name);
    expect(names).toEqual([...new Set(names)].sort());
    expect(names).toEqual(expect.arrayContaining(['alerts', 'beta', 'zeta']));
    expect(names).not.toContain('prod-only');
    const identifier = (await novu.environments.list()).result.find((environment) => environment.id === server.devEnvironmentId)!.identifier;
    expect((await novu.environments.getTags(identifier)).result.map((tag) => tag.name)).toEqual(names);
    await novu.workflows.delete('cov-tags-1');
    expect((await novu.environments.getTags(server.devEnvironmentId)).result.map((tag) => tag.name)).not.toContain('zeta');
    await expect(prodNovu.environments.getTags(server.devEnvironmentId)).rejects.toMatchObject({ statusCode: 404 });
    expect((await prodNovu.environments.getTags(server.prodEnvironmentId)).result.map((tag) => tag.name)).toEqual(['prod-only']);
  });
});
