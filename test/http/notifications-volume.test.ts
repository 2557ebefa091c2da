import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { NotificationEvent, Severity, StepType, Subscriber, TopicSubscription } from '../../src/domain/types.js';
import { buildNotificationEvent, insertNotificationEvents, insertSubscriber, scopeOf, seededRandom, type BuiltEvent } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Volume: 10,000 notification events with their jobs and execution details inserted through the store,
 * then every filter of GET /v1/notifications alone and combined, page/limit edges, order and hasMore,
 * each compared with the same query computed in memory.
 */
const TOTAL = 10_000;
const CHANNEL_SETS: StepType[][] = [['in_app'], ['email'], ['sms', 'email'], ['digest', 'email'], ['push'], ['chat', 'in_app'], ['delay', 'sms']];
const SEVERITIES: Array<Severity | undefined> = ['high', 'medium', 'low', 'none', undefined];
const CONTEXTS: string[][] = [[], ['tenant:a'], ['tenant:b'], ['tenant:a', 'region:eu']];
const NAMES = [['Ada', 'Lovelace'], ['Grace', 'Hopper'], ['Alan', 'Turing'], ['Edsger', 'Dijkstra'], ['Barbara', 'Liskov']];

let server: TestServer;
let subscribers: Subscriber[];
let events: NotificationEvent[];
let templates: string[];
let subscriptions: TopicSubscription[];
const now = Date.now();

beforeAll(async () => {
  server = await startTestServer();
  const store = server.deps.store;
  const dev = await scopeOf(store, server.devEnvironmentId);
  const prod = await scopeOf(store, server.prodEnvironmentId);
  subscribers = [];
  for (let i = 0; i < 20; i++) {
    const [firstName, lastName] = NAMES[i % NAMES.length];
    subscribers.push(await insertSubscriber(store, dev, { subscriberId: `sub-${i}`, firstName, lastName, email: `user${i}@example.com` }));
  }
  const topicTimes = new Date(now).toISOString();
  const topics = ['news', 'alerts'].map((key) => ({ _id: newId(), _environmentId: dev.environmentId, _organizationId: dev.organizationId, key, createdAt: topicTimes, updatedAt: topicTimes }));
  for (const topic of topics) await store.topics.create(topic);
  subscriptions = await store.topics.addSubscriptions(
    topics.flatMap((topic) => subscribers.slice(0, 10).map((s) => ({
      _id: newId(), _environmentId: dev.environmentId, _topicId: topic._id, topicKey: topic.key, _subscriberId: s._id, subscriberId: s.subscriberId, createdAt: topicTimes,
    }))),
  );
  templates = Array.from({ length: 5 }, () => newId());

  const next = seededRandom(7);
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
  const built: BuiltEvent[] = [];
  for (let i = 0; i < TOTAL; i++) {
    const subscriber = pick(subscribers);
    const subscribed = subscriptions.filter((s) => s._subscriberId === subscriber._id);
    const topic = subscribed.length > 0 && next() < 0.3 ? pick(subscribed) : undefined;
    const contextKeys = pick(CONTEXTS);
    const severity = pick(SEVERITIES);
    built.push(
      buildNotificationEvent(subscriber, {
        channels: pick(CHANNEL_SETS),
        _templateId: pick(templates),
        transactionId: `tx-${Math.floor(next() * 3000)}`,
        // Whole minutes over the last 30 days (many ties), and a few in the future (after the default `before`).
        createdAt: new Date(now - Math.floor(next() * 43_200) * 60_000 + (i % 500 === 0 ? 86_400_000 : 0)).toISOString(),
        contextKeys: next() < 0.5 ? contextKeys : [...contextKeys].reverse(),
        topics: topic ? [{ _topicId: topic._topicId, topicKey: topic.topicKey }] : [],
        ...(severity ? { severity } : { severity: undefined }),
      }),
    );
  }
  const prodSubscriber = await insertSubscriber(store, prod, { subscriberId: 'sub-0', email: 'user0@example.com' });
  const other = Array.from({ length: 200 }, () => buildNotificationEvent(prodSubscriber, { createdAt: new Date(now - 60_000).toISOString(), _templateId: templates[0] }));
  await insertNotificationEvents(store, [...built, ...other]);
  events = built.map(({ event, jobs }) => ({ ...event, jobs }));
}, 180_000);
afterAll(async () => {
  await server?.close();
});

interface Query {
  channels?: string[];
  templates?: string[];
  emails?: string[];
  search?: string;
  subscriberIds?: string[];
  severity?: string[];
  transactionId?: string;
  topicKey?: string;
  subscriptionId?: string;
  contextKeys?: string[];
  after?: string;
  before?: string;
  page?: number;
  limit?: number;
}

function toQueryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (Array.isArray(value)) for (const item of value) params.append(key, item);
    else if (value !== undefined) params.append(key, String(value));
  }
  return params.toString();
}

const sameSet = (a: string[], b: string[]) => [...new Set(a)].sort().join('\n') === [...new Set(b)].sort().join('\n');
const anyOf = (wanted: string[] | undefined, value: string | undefined) => wanted === undefined || (value !== undefined && wanted.includes(value));

function expected(query: Query, requestTime: number) {
  const byId = new Map(subscribers.map((s) => [s._id, s]));
  const subscriptionIds = new Map(subscriptions.map((s) => [`${s._subscriberId}/${s._topicId}`, s._id]));
  const search = query.search?.toLowerCase();
  const after = query.after === undefined ? undefined : new Date(query.after).toISOString();
  const before = query.before === undefined ? new Date(requestTime).toISOString() : new Date(query.before).toISOString();
  const matching = events
    .filter((e) => query.channels === undefined || (e.channels ?? []).some((c) => query.channels!.includes(c)))
    .filter((e) => anyOf(query.templates, e._templateId))
    .filter((e) => anyOf(query.emails, byId.get(e._subscriberId)!.email ?? undefined))
    .filter((e) => anyOf(query.subscriberIds, byId.get(e._subscriberId)!.subscriberId))
    .filter((e) => anyOf(query.severity, e.severity))
    .filter((e) => query.transactionId === undefined || e.transactionId === query.transactionId)
    .filter((e) => query.topicKey === undefined || (e.topics ?? []).some((t) => t.topicKey === query.topicKey))
    .filter((e) => query.subscriptionId === undefined || (e.topics ?? []).some((t) => subscriptionIds.get(`${e._subscriberId}/${t._topicId}`) === query.subscriptionId))
    .filter((e) => query.contextKeys === undefined || sameSet(e.contextKeys ?? [], query.contextKeys))
    .filter((e) => {
      if (search === undefined) return true;
      const s = byId.get(e._subscriberId)!;
      return [s.subscriberId, s.email, s.firstName, s.lastName, `${s.firstName} ${s.lastName}`].some((text) => text?.toLowerCase().includes(search));
    })
    .filter((e) => (after === undefined || e.createdAt! > after) && e.createdAt! < before)
    .sort((a, b) => (a.createdAt === b.createdAt ? (a._id < b._id ? 1 : -1) : a.createdAt! < b.createdAt! ? 1 : -1));
  const page = query.page ?? 0;
  const limit = query.limit ?? 10;
  return { events: matching.slice(page * limit, page * limit + limit), total: matching.length, hasMore: matching.length > (page + 1) * limit, page, limit };
}

async function check(query: Query): Promise<number> {
  const path = `/v1/notifications?${toQueryString(query)}`;
  const requestTime = Date.now();
  const response = await server.request('GET', path);
  expect(response.status, path).toBe(200);
  const want = expected(query, requestTime);
  expect(response.body.data.map((e: any) => e._id), path).toEqual(want.events.map((e) => e._id));
  expect({ hasMore: response.body.hasMore, page: response.body.page, pageSize: response.body.pageSize }, path).toEqual({
    hasMore: want.hasMore, page: want.page, pageSize: want.limit,
  });
  return want.total;
}

const iso = (daysAgo: number) => new Date(now - daysAgo * 86_400_000).toISOString();

describe('GET /v1/notifications over 10,000 events', () => {
  it('lists newest first with each event jobs and execution details', async () => {
    expect(await check({ limit: 50 })).toBeGreaterThan(9900);
    const response = await server.request('GET', '/v1/notifications?limit=50&page=3');
    const want = expected({ limit: 50, page: 3 }, Date.now());
    for (const [index, event] of response.body.data.entries()) {
      const jobs = want.events[index].jobs!;
      expect(event.jobs.map((j: any) => j._id)).toEqual(jobs.map((j) => j._id));
      expect(event.jobs.map((j: any) => j.executionDetails.map((d: any) => d._id))).toEqual(jobs.map((j) => j.executionDetails.map((d) => d._id)));
      expect(event.channels).toEqual(want.events[index].channels);
    }
  });

  it('honours page and limit edges', async () => {
    const total = expected({}, Date.now()).total;
    await check({});
    await check({ limit: 1 });
    await check({ limit: 1, page: total - 1 });
    await check({ limit: 1, page: total });
    await check({ limit: 50, page: Math.floor(total / 50) });
    await check({ limit: 50, page: Math.floor(total / 50) - 1 });
    await check({ limit: 50, page: 10_000 });
    await check({ limit: 13, page: 77 });
  });

  it('applies each filter alone', async () => {
    for (const channel of ['in_app', 'email', 'sms', 'chat', 'push', 'digest', 'delay']) expect(await check({ channels: [channel], limit: 50, page: 1 })).toBeGreaterThan(0);
    expect(await check({ channels: ['custom'] })).toBe(0);
    expect(await check({ channels: ['push', 'chat'], limit: 50 })).toBeGreaterThan(0);
    expect(await check({ templates: [templates[0]], limit: 50, page: 2 })).toBeGreaterThan(0);
    expect(await check({ templates: templates.slice(1, 3), limit: 50 })).toBeGreaterThan(0);
    expect(await check({ emails: ['user3@example.com'], limit: 50 })).toBeGreaterThan(0);
    expect(await check({ emails: ['user3@example.com', 'user4@example.com', 'nobody@example.com'], limit: 50 })).toBeGreaterThan(0);
    expect(await check({ subscriberIds: ['sub-5'], limit: 50, page: 3 })).toBeGreaterThan(0);
    expect(await check({ subscriberIds: ['sub-5', 'sub-6'], limit: 50 })).toBeGreaterThan(0);
    for (const severity of ['high', 'medium', 'low', 'none']) expect(await check({ severity: [severity], limit: 50 })).toBeGreaterThan(0);
    expect(await check({ severity: ['high', 'low'], limit: 50 })).toBeGreaterThan(0);
    expect(await check({ transactionId: 'tx-17' })).toBeGreaterThan(0);
    expect(await check({ topicKey: 'news', limit: 50 })).toBeGreaterThan(0);
    expect(await check({ topicKey: 'alerts', limit: 50, page: 4 })).toBeGreaterThan(0);
    const subscription = subscriptions.find((s) => s.topicKey === 'news' && s.subscriberId === 'sub-2')!;
    expect(await check({ subscriptionId: subscription._id, limit: 50 })).toBeGreaterThan(0);
    for (const contextKeys of CONTEXTS.filter((keys) => keys.length > 0)) {
      expect(await check({ contextKeys, limit: 50 })).toBeGreaterThan(0);
      expect(await check({ contextKeys: [...contextKeys].reverse(), limit: 50, page: 1 })).toBeGreaterThan(0);
    }
    for (const search of ['sub-1', 'USER7@', 'hopper', 'ada love', 'ing']) expect(await check({ search, limit: 50 })).toBeGreaterThan(0);
    expect(await check({ after: iso(3), limit: 50 })).toBeGreaterThan(0);
    expect(await check({ before: iso(25), limit: 50, page: 2 })).toBeGreaterThan(0);
    expect(await check({ before: iso(-2), limit: 50 })).toBeGreaterThan(await check({ limit: 50 }));
    expect(await check({ after: iso(10), before: iso(9), limit: 50 })).toBeGreaterThan(0);
  });

  it('combines filters', async () => {
    await check({ channels: ['email'], subscriberIds: ['sub-1', 'sub-2'], limit: 50 });
    await check({ templates: [templates[1]], severity: ['high', 'medium'], after: iso(15), limit: 20, page: 1 });
    await check({ emails: ['user0@example.com'], topicKey: 'news', contextKeys: ['tenant:a'] });
    await check({ search: 'grace', channels: ['sms'], before: iso(5), limit: 50 });
    await check({ channels: ['in_app', 'digest'], templates: templates.slice(0, 2), emails: ['user1@example.com', 'user6@example.com'], severity: ['none', 'low'], after: iso(29), before: iso(1) });
    await check({ subscriptionId: subscriptions[0]._id, topicKey: 'news', subscriberIds: [subscriptions[0].subscriberId], limit: 50 });
    await check({ topicKey: 'alerts', channels: ['push'], contextKeys: ['region:eu', 'tenant:a'] });
  });

  it('never shows another environment', async () => {
    const response = await server.request('GET', '/v1/notifications?emails=user0@example.com&limit=50');
    expect(response.body.data.every((e: any) => e._environmentId === server.devEnvironmentId)).toBe(true);
    const prod = await server.request('GET', '/v1/notifications?limit=50&page=2', { key: server.prodKey });
    expect(prod.body).toMatchObject({ hasMore: true, page: 2, pageSize: 50 });
    expect(prod.body.data.every((e: any) => e._environmentId === server.prodEnvironmentId)).toBe(true);
    const exactEnd = await server.request('GET', '/v1/notifications?limit=50&page=3', { key: server.prodKey });
    expect(exactEnd.body.data).toHaveLength(50);
    expect(exactEnd.body.hasMore).toBe(false);
    const last = await server.request('GET', '/v1/notifications?limit=50&page=4', { key: server.prodKey });
    expect(last.body).toMatchObject({ data: [], hasMore: false });
  });
});
