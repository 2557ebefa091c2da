import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/node';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { statusOf } from './novu-node-status.js';

/**
 * The legacy `@novu/node` 2.6.6 SDK (axios, `backendUrl`, `Authorization: ApiKey ...`), unchanged, against a real
 * Herald: every subscriber and topic method, each result checked against the state read back over the API.
 */
let server: TestServer;
let novu: Novu;
let prod: Novu;

beforeAll(async () => {
  server = await startTestServer();
  novu = new Novu(server.devKey, { backendUrl: server.url });
  prod = new Novu(server.prodKey, { backendUrl: server.url });
});
afterAll(async () => {
  await server?.close();
});

/** The stored subscriber, read through the v2 API (not through the route under test). */
async function stored(subscriberId: string, key = server.devKey) {
  const response = await server.request('GET', `/v2/subscribers/${encodeURIComponent(subscriberId)}`, { key });
  return response.status === 200 ? response.body.data : undefined;
}

describe('@novu/node subscribers', () => {
  it('identify creates (201), and identify again updates the same subscriber', async () => {
    const created = await novu.subscribers.identify('node-ada', { email: 'ada@example.com', firstName: 'Ada', data: { plan: 'pro' } });
    expect(created.status).toBe(201);
    expect(created.data.data).toMatchObject({ subscriberId: 'node-ada', email: 'ada@example.com', firstName: 'Ada', data: { plan: 'pro' } });
    expect(await stored('node-ada')).toEqual(created.data.data);

    const again = await novu.subscribers.identify('node-ada', { lastName: 'Lovelace' });
    expect(again.status).toBe(201);
    expect(again.data.data._id).toBe(created.data.data._id);
    expect(await stored('node-ada')).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
  });

  it('get, update (PUT) and delete', async () => {
    await novu.subscribers.identify('node-bob', { firstName: 'Bob', phone: '+15550001' });
    const got = await novu.subscribers.get('node-bob');
    expect(got.status).toBe(200);
    expect(got.data.data).toEqual(await stored('node-bob'));

    const updated = await novu.subscribers.update('node-bob', { lastName: 'Builder', locale: 'en-GB' });
    expect(updated.status).toBe(200);
    expect(updated.data.data).toMatchObject({ firstName: 'Bob', lastName: 'Builder', locale: 'en-GB', phone: '+15550001' });
    expect(await stored('node-bob')).toEqual(updated.data.data);

    const deleted = await novu.subscribers.delete('node-bob');
    expect(deleted.status).toBe(200);
    expect(deleted.data).toEqual({ data: { acknowledged: true, status: 'deleted' } });
    expect(await stored('node-bob')).toBeUndefined();
    expect(await statusOf(novu.subscribers.get('node-bob'))).toBe(404);
  });

  it('list pages with page/limit in the v1 shape', async () => {
    for (const id of ['node-list-1', 'node-list-2', 'node-list-3']) await novu.subscribers.identify(id, { firstName: id });
    const all = (await server.request('GET', '/v2/subscribers?limit=100')).body;
    const first = await novu.subscribers.list(0, 2);
    expect(first.status).toBe(200);
    expect(Object.keys(first.data).sort()).toEqual(['data', 'hasMore', 'page', 'pageSize', 'totalCount']);
    expect(first.data).toMatchObject({ page: 0, pageSize: 2, totalCount: all.totalCount, hasMore: true });
    expect(first.data.data.map((s: { subscriberId: string }) => s.subscriberId)).toEqual(all.data.slice(0, 2).map((s: { subscriberId: string }) => s.subscriberId));
    const last = await novu.subscribers.list(Math.floor((all.totalCount - 1) / 2), 2);
    expect(last.data.hasMore).toBe(false);
    expect(last.data.data.at(-1).subscriberId).toBe(all.data.at(-1).subscriberId);
  });

  it('bulkCreate reports created, updated and failed, and stores the good ones', async () => {
    await novu.subscribers.identify('node-bulk-old', { firstName: 'Old' });
    const response = await novu.subscribers.bulkCreate([
      { subscriberId: 'node-bulk-new', firstName: 'New' },
      { subscriberId: 'node-bulk-old', firstName: 'Renamed' },
      { subscriberId: 'node-bulk-bad', email: 'not-an-email' },
    ]);
    expect(response.status).toBe(201);
    expect(response.data.data).toEqual({
      created: [{ subscriberId: 'node-bulk-new' }],
      updated: [{ subscriberId: 'node-bulk-old' }],
      failed: [{ subscriberId: 'node-bulk-bad', message: 'email must be an email' }],
    });
    expect((await stored('node-bulk-new'))?.firstName).toBe('New');
    expect((await stored('node-bulk-old'))?.firstName).toBe('Renamed');
    expect(await stored('node-bulk-bad')).toBeUndefined();
  });

  it('keeps environments apart: another environment sees 404 and changes nothing', async () => {
    await novu.subscribers.identify('node-dev-only', { firstName: 'Dev' });
    expect(await statusOf(prod.subscribers.get('node-dev-only'))).toBe(404);
    expect(await statusOf(prod.subscribers.update('node-dev-only', { firstName: 'Hacked' }))).toBe(404);
    expect(await statusOf(prod.subscribers.delete('node-dev-only'))).toBe(404);
    expect((await stored('node-dev-only'))?.firstName).toBe('Dev');
  });
});

describe('@novu/node topics', () => {
  it('create, get, list by key, rename and delete', async () => {
    const created = await novu.topics.create({ key: 'node-news', name: 'News' });
    expect(created.status).toBe(201);
    expect(created.data.data).toEqual({ _id: expect.any(String), key: 'node-news' });
    const v2 = (await server.request('GET', '/v2/topics/node-news')).body.data;
    expect(v2).toMatchObject({ _id: created.data.data._id, key: 'node-news', name: 'News' });

    const got = await novu.topics.get('node-news');
    expect(got.data.data).toMatchObject({ _id: v2._id, key: 'node-news', name: 'News', subscribers: [], _environmentId: server.devEnvironmentId });

    await novu.topics.create({ key: 'node-other', name: 'Other' });
    const byKey = await novu.topics.list({ key: 'node-news' });
    expect(byKey.data).toMatchObject({ page: 0, pageSize: 10, totalCount: 1 });
    expect(byKey.data.data.map((t: { key: string }) => t.key)).toEqual(['node-news']);
    const paged = await novu.topics.list({ page: 0, pageSize: 1 });
    expect(paged.data).toMatchObject({ page: 0, pageSize: 1, hasMore: true });
    expect(paged.data.data).toHaveLength(1);

    const renamed = await novu.topics.rename('node-news', 'Daily news');
    expect(renamed.data.data.name).toBe('Daily news');
    expect((await server.request('GET', '/v2/topics/node-news')).body.data.name).toBe('Daily news');

    const deleted = await novu.topics.delete('node-other');
    expect(deleted.status).toBe(204);
    expect((await server.request('GET', '/v2/topics/node-other')).status).toBe(404);
  });

  it('addSubscribers, getSubscriber / checkSubscriber, removeSubscribers', async () => {
    await novu.subscribers.identify('node-t1', {});
    await novu.subscribers.identify('node-t2', {});
    await novu.topics.create({ key: 'node-team', name: 'Team' });

    const added = await novu.topics.addSubscribers('node-team', { subscribers: ['node-t1', 'node-t2', 'node-ghost'] });
    expect(added.status).toBe(200);
    expect(added.data.data).toEqual({ succeeded: ['node-t1', 'node-t2'], failed: { notFound: ['node-ghost'] } });
    const members = (await server.request('GET', '/v2/topics/node-team/subscriptions?limit=100')).body.data.map((s: { subscriber: { subscriberId: string } }) => s.subscriber.subscriberId);
    expect(members.sort()).toEqual(['node-t1', 'node-t2']);
    expect((await novu.topics.get('node-team')).data.data.subscribers.sort()).toEqual(['node-t1', 'node-t2']);

    const member = await novu.topics.getSubscriber('node-team', 'node-t1');
    const t1 = await stored('node-t1');
    expect(member.data.data).toEqual({
      _organizationId: t1._organizationId,
      _environmentId: server.devEnvironmentId,
      _subscriberId: t1._id,
      _topicId: (await novu.topics.get('node-team')).data.data._id,
      topicKey: 'node-team',
      externalSubscriberId: 'node-t1',
    });
    expect((await novu.topics.checkSubscriber('node-team', 'node-t2')).status).toBe(200);

    const removed = await novu.topics.removeSubscribers('node-team', { subscribers: ['node-t1'] });
    expect(removed.status).toBe(204);
    expect(await statusOf(novu.topics.checkSubscriber('node-team', 'node-t1'))).toBe(404);
    expect((await novu.topics.get('node-team')).data.data.subscribers).toEqual(['node-t2']);
  });

  it('keeps environments apart', async () => {
    await novu.topics.create({ key: 'node-dev-topic', name: 'Dev' });
    expect(await statusOf(prod.topics.get('node-dev-topic'))).toBe(404);
    expect(await statusOf(prod.topics.rename('node-dev-topic', 'X'))).toBe(404);
    expect(await statusOf(prod.topics.delete('node-dev-topic'))).toBe(404);
    expect(await statusOf(prod.topics.removeSubscribers('node-dev-topic', { subscribers: ['x'] }))).toBe(404);
    expect((await server.request('GET', '/v2/topics/node-dev-topic')).body.data.name).toBe('Dev');
  });
});
