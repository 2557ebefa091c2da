import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryChannel, Message, Subscriber } from '../../src/domain/types.js';
import { buildMessage, insertMessages, insertSubscriber, scopeOf, seededRandom } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Volume: 10,000 messages (plus another environment's) inserted through the store, then every filter of
 * GET /v1/messages alone and combined, page/limit edges, order, hasMore and totalCount, each compared with
 * the same query computed in memory.
 */
const TOTAL = 10_000;
const CHANNELS: DeliveryChannel[] = ['in_app', 'email', 'sms', 'chat', 'push'];
const CONTEXTS: string[][] = [[], ['tenant:a'], ['tenant:b'], ['tenant:a', 'region:eu'], ['region:eu', 'tenant:b']];

let server: TestServer;
let subscribers: Subscriber[];
let live: Message[];

beforeAll(async () => {
  server = await startTestServer();
  const store = server.deps.store;
  const dev = await scopeOf(store, server.devEnvironmentId);
  const prod = await scopeOf(store, server.prodEnvironmentId);
  subscribers = [];
  for (let i = 0; i < 20; i++) subscribers.push(await insertSubscriber(store, dev, { subscriberId: `vol-${i}` }));
  const prodSubscriber = await insertSubscriber(store, prod, { subscriberId: 'vol-0' });
  const next = seededRandom(42);
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
  const base = Date.UTC(2026, 0, 1);
  const all: Message[] = [];
  for (let i = 0; i < TOTAL; i++) {
    const contextKeys = pick(CONTEXTS);
    all.push(
      buildMessage(pick(subscribers), {
        channel: pick(CHANNELS),
        transactionId: `tx-${Math.floor(next() * 500)}`,
        // Few distinct seconds, so many messages share a createdAt and the id decides their order.
        createdAt: new Date(base + Math.floor(next() * 3000) * 1000).toISOString(),
        contextKeys: next() < 0.5 ? contextKeys : [...contextKeys].reverse(),
        deleted: next() < 0.05,
      }),
    );
  }
  const other = Array.from({ length: 300 }, () => buildMessage(prodSubscriber, { transactionId: 'tx-1', createdAt: new Date(base).toISOString() }));
  await insertMessages(store, [...all, ...other]);
  live = all.filter((m) => !m.deleted);
}, 120_000);
afterAll(async () => {
  await server?.close();
});

interface Query {
  channel?: DeliveryChannel;
  subscriberId?: string;
  transactionId?: string[];
  contextKeys?: string[];
  page?: number;
  limit?: number;
}

function toQueryString(query: Query): string {
  const params = new URLSearchParams();
  if (query.channel) params.append('channel', query.channel);
  if (query.subscriberId) params.append('subscriberId', query.subscriberId);
  for (const id of query.transactionId ?? []) params.append('transactionId', id);
  for (const key of query.contextKeys ?? []) params.append('contextKeys', key);
  if (query.page !== undefined) params.append('page', String(query.page));
  if (query.limit !== undefined) params.append('limit', String(query.limit));
  return params.toString();
}

const sameSet = (a: string[], b: string[]) => [...new Set(a)].sort().join('\n') === [...new Set(b)].sort().join('\n');

function expected(query: Query) {
  const externalId = new Map(subscribers.map((s) => [s._id, s.subscriberId]));
  const matching = live
    .filter((m) => query.channel === undefined || m.channel === query.channel)
    .filter((m) => query.subscriberId === undefined || externalId.get(m._subscriberId) === query.subscriberId)
    .filter((m) => query.transactionId === undefined || query.transactionId.includes(m.transactionId))
    .filter((m) => query.contextKeys === undefined || sameSet(m.contextKeys ?? [], query.contextKeys))
    .sort((a, b) => (a.createdAt === b.createdAt ? (a._id < b._id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
  const page = query.page ?? 0;
  const limit = query.limit ?? 10;
  return {
    ids: matching.slice(page * limit, page * limit + limit).map((m) => m._id),
    totalCount: matching.length,
    hasMore: matching.length > (page + 1) * limit,
    page,
    pageSize: limit,
  };
}

async function check(query: Query): Promise<number> {
  const path = `/v1/messages?${toQueryString(query)}`;
  const response = await server.request('GET', path);
  expect(response.status, path).toBe(200);
  const want = expected(query);
  expect(response.body.data.map((m: any) => m._id), path).toEqual(want.ids);
  expect({ totalCount: response.body.totalCount, hasMore: response.body.hasMore, page: response.body.page, pageSize: response.body.pageSize }, path).toEqual({
    totalCount: want.totalCount, hasMore: want.hasMore, page: want.page, pageSize: want.pageSize,
  });
  return want.totalCount;
}

describe('GET /v1/messages over 10,000 messages', () => {
  it('holds what was inserted', () => {
    expect(live.length).toBeGreaterThan(9000);
  });

  it('lists all of them newest first, with page and limit edges', async () => {
    expect(await check({})).toBe(live.length);
    await check({ limit: 1 });
    await check({ limit: 1000 });
    await check({ limit: 1000, page: Math.floor(live.length / 1000) });
    await check({ limit: 1000, page: Math.floor(live.length / 1000) + 1 });
    await check({ limit: 7, page: 333 });
    await check({ limit: 1, page: live.length - 1 });
    await check({ limit: 1, page: live.length });
    await check({ limit: live.length > 1000 ? 1000 : live.length, page: 3 });
  });

  it('applies each filter alone', async () => {
    for (const channel of CHANNELS) expect(await check({ channel, limit: 50 })).toBeGreaterThan(0);
    for (const subscriber of subscribers.slice(0, 5)) expect(await check({ subscriberId: subscriber.subscriberId, limit: 100, page: 1 })).toBeGreaterThan(0);
    expect(await check({ subscriberId: 'nobody' })).toBe(0);
    expect(await check({ transactionId: ['tx-7'] })).toBeGreaterThan(0);
    expect(await check({ transactionId: ['tx-7', 'tx-8', 'tx-9', 'tx-no'], limit: 25 })).toBeGreaterThan(0);
    for (const contextKeys of CONTEXTS.filter((keys) => keys.length > 0)) {
      expect(await check({ contextKeys, limit: 100 })).toBeGreaterThan(0);
      expect(await check({ contextKeys: [...contextKeys].reverse(), limit: 100, page: 2 })).toBeGreaterThan(0);
    }
    expect(await check({ contextKeys: ['tenant:a', 'region:eu', 'x:y'] })).toBe(0);
  });

  it('combines filters', async () => {
    await check({ channel: 'in_app', subscriberId: 'vol-3', limit: 20 });
    await check({ channel: 'email', transactionId: ['tx-1', 'tx-2', 'tx-3'] });
    await check({ subscriberId: 'vol-4', contextKeys: ['tenant:a'], limit: 5, page: 1 });
    await check({ channel: 'sms', subscriberId: 'vol-5', transactionId: ['tx-10', 'tx-11', 'tx-12', 'tx-13', 'tx-14', 'tx-15'], contextKeys: ['tenant:b'] });
    await check({ channel: 'push', contextKeys: ['region:eu', 'tenant:a'], limit: 1000 });
  });

  it('never shows another environment or deleted messages', async () => {
    const listed: any[] = [];
    for (let page = 0; ; page++) {
      const response = await server.request('GET', `/v1/messages?limit=1000&page=${page}`);
      listed.push(...response.body.data);
      if (!response.body.hasMore) break;
    }
    expect(listed.map((m) => m._id).sort()).toEqual(live.map((m) => m._id).sort());
    expect(listed.every((m) => m._environmentId === server.devEnvironmentId)).toBe(true);
    const prod = await server.request('GET', '/v1/messages?limit=1000', { key: server.prodKey });
    expect(prod.body).toMatchObject({ totalCount: 300, hasMore: false });
    expect(prod.body.data.every((m: any) => m._environmentId === server.prodEnvironmentId)).toBe(true);
  });
});
