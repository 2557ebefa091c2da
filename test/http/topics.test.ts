import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { Subscriber } from '../../src/domain/types.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { expectErrorBody, expectIsoTimestamp, expectRecordId } from '../helpers/shape.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  for (const subscriberId of ['ann', 'bob', 'cat', 'dan']) await addSubscriber(server.devEnvironmentId, subscriberId);
  await addSubscriber(server.prodEnvironmentId, 'prod-only');
});
afterAll(async () => {
  await server.close();
});

async function addSubscriber(environmentId: string, subscriberId: string): Promise<void> {
  const now = new Date().toISOString();
  const environment = await server.deps.store.tenancy.getEnvironment(environmentId);
  const subscriber: Subscriber = {
    _id: newId(),
    _organizationId: environment!._organizationId,
    _environmentId: environmentId,
    subscriberId,
    firstName: subscriberId.toUpperCase(),
    email: `${subscriberId}@example.com`,
    channels: [],
    topics: [],
    __v: 0,
    deleted: false,
    createdAt: now,
    updatedAt: now,
  };
  await server.deps.store.subscribers.create(subscriber);
}

async function subscriptionRows(topicKey: string) {
  return (server.deps.store as any).db
    .selectFrom('topic_subscriptions')
    .selectAll()
    .where('topic_key', '=', topicKey)
    .orderBy('id')
    .execute();
}

describe('topics CRUD', () => {
  it('creates (201), upserts the name (200), 409 with failIfExists, and stores the topic', async () => {
    const created = await server.request('POST', '/v2/topics', { body: { key: 'team:eng', name: 'Engineering' } });
    expect(created.status).toBe(201);
    expectRecordId(created.body.data._id);
    expectIsoTimestamp(created.body.data.createdAt);
    expect(created.body.data).toMatchObject({ key: 'team:eng', name: 'Engineering' });

    const upserted = await server.request('POST', '/v2/topics', { body: { key: 'team:eng', name: 'Eng' } });
    expect(upserted.status).toBe(200);
    expect(upserted.body.data).toMatchObject({ _id: created.body.data._id, name: 'Eng' });
    const conflict = await server.request('POST', '/v2/topics?failIfExists=true', { body: { key: 'team:eng' } });
    expect(conflict.status).toBe(409);
    expectErrorBody(conflict.body, 409);

    const stored = await server.deps.store.topics.getByKey(server.devEnvironmentId, 'team:eng');
    expect(stored).toMatchObject({ _id: created.body.data._id, name: 'Eng', _environmentId: server.devEnvironmentId });
    expect(await server.deps.store.topics.getByKey(server.prodEnvironmentId, 'team:eng')).toBeUndefined();
  });

  it.each([
    ['missing key', { name: 'x' }],
    ['key with spaces', { key: 'has space' }],
    ['key too long', { key: 'k'.repeat(101) }],
    ['empty name', { key: 'ok', name: '' }],
  ])('400 for %s', async (_label, body) => {
    const response = await server.request('POST', '/v2/topics', { body });
    expect(response.status).toBe(400);
    expectErrorBody(response.body, 400, '/v2/topics');
  });

  it('accepts an email address as key', async () => {
    expect((await server.request('POST', '/v2/topics', { body: { key: 'ops@example.com' } })).status).toBe(201);
  });

  it('gets, renames and deletes by key; other environments see 404 and change nothing', async () => {
    await server.request('POST', '/v2/topics', { body: { key: 'lifecycle', name: 'Before' } });
    const got = await server.request('GET', '/v2/topics/lifecycle');
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({ key: 'lifecycle', name: 'Before' });

    expect((await server.request('GET', '/v2/topics/lifecycle', { key: server.prodKey })).status).toBe(404);
    const foreignPatch = await server.request('PATCH', '/v2/topics/lifecycle', { key: server.prodKey, body: { name: 'Hijack' } });
    expect(foreignPatch.status).toBe(404);
    expect(foreignPatch.body.message).toBe('Topic with key lifecycle not found');
    expect((await server.request('DELETE', '/v2/topics/lifecycle', { key: server.prodKey })).status).toBe(404);
    expect((await server.deps.store.topics.getByKey(server.devEnvironmentId, 'lifecycle'))!.name).toBe('Before');

    const patched = await server.request('PATCH', '/v2/topics/lifecycle', { body: { name: 'After' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.name).toBe('After');
    expect((await server.deps.store.topics.getByKey(server.devEnvironmentId, 'lifecycle'))!.name).toBe('After');

    await server.request('POST', '/v2/topics/lifecycle/subscriptions', { body: { subscriberIds: ['ann'] } });
    const deleted = await server.request('DELETE', '/v2/topics/lifecycle');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ data: { acknowledged: true, status: 'deleted' } });
    expect((await server.request('GET', '/v2/topics/lifecycle')).status).toBe(404);
    expect(await server.deps.store.topics.getByKey(server.devEnvironmentId, 'lifecycle')).toBeUndefined();
    expect(await subscriptionRows('lifecycle')).toEqual([]);
  });

  it('lists with key/name filters and cursor pages', async () => {
    const fresh = await startTestServer();
    try {
      for (const [key, name] of [['news-a', 'Daily News'], ['news-b', 'Weekly news'], ['alerts', 'Alerts']]) {
        expect((await fresh.request('POST', '/v2/topics', { body: { key, name } })).status).toBe(201);
      }
      const first = await fresh.request('GET', '/v2/topics?limit=2');
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ totalCount: 3, totalCountCapped: false, previous: null, next: '2' });
      expect(first.body.data.map((t: any) => t.key)).toEqual(['news-a', 'news-b']);
      const second = await fresh.request('GET', `/v2/topics?limit=2&after=${first.body.next}`);
      expect(second.body).toMatchObject({ next: null, previous: '2' });
      expect(second.body.data.map((t: any) => t.key)).toEqual(['alerts']);
      const back = await fresh.request('GET', `/v2/topics?limit=2&before=${second.body.previous}`);
      expect(back.body.data.map((t: any) => t.key)).toEqual(['news-a', 'news-b']);

      expect((await fresh.request('GET', '/v2/topics?name=NEWS')).body.data.map((t: any) => t.key)).toEqual(['news-a', 'news-b']);
      expect((await fresh.request('GET', '/v2/topics?key=alerts')).body).toMatchObject({ totalCount: 1, data: [{ key: 'alerts' }] });
      expect((await fresh.request('GET', '/v2/topics', { key: fresh.prodKey })).body).toMatchObject({ totalCount: 0, data: [] });
      expect((await fresh.request('GET', '/v2/topics?limit=0')).status).toBe(400);
      expect((await fresh.request('GET', '/v2/topics?after=abc')).status).toBe(400);
    } finally {
      await fresh.close();
    }
  });
});

describe('topic subscriptions', () => {
  it('adds subscriptions, reports unknown subscribers, keeps existing ones, and stores denormalised columns', async () => {
    const response = await server.request('POST', '/v2/topics/digest-readers/subscriptions', {
      body: { subscriberIds: ['ann', 'bob', 'ghost', 'prod-only'], name: 'Digest readers' },
    });
    expect(response.status).toBe(201);
    expect(response.body.meta).toEqual({ totalCount: 4, successful: 2, failed: 2 });
    expect(response.body.errors).toEqual([
      { subscriberId: 'ghost', code: 'SUBSCRIBER_NOT_FOUND', message: 'Subscriber with id ghost not found' },
      { subscriberId: 'prod-only', code: 'SUBSCRIBER_NOT_FOUND', message: 'Subscriber with id prod-only not found' },
    ]);
    const [annSub] = response.body.data;
    expectRecordId(annSub._id);
    expect(annSub).toMatchObject({
      identifier: 'digest-readers:ann',
      topic: { key: 'digest-readers', name: 'Digest readers' },
      subscriber: { subscriberId: 'ann', firstName: 'ANN', email: 'ann@example.com' },
    });
    // The topic was created by the subscription call, as in Novu.
    const topic = await server.deps.store.topics.getByKey(server.devEnvironmentId, 'digest-readers');
    expect(topic!.name).toBe('Digest readers');

    const rows = await subscriptionRows('digest-readers');
    expect(rows.map((r: any) => [r.external_subscriber_id, r.topic_id, r.environment_id])).toEqual([
      ['ann', topic!._id, server.devEnvironmentId],
      ['bob', topic!._id, server.devEnvironmentId],
    ]);

    const again = await server.request('POST', '/v2/topics/digest-readers/subscriptions', { body: { subscriptions: ['ann', { subscriberId: 'cat' }] } });
    expect(again.status).toBe(201);
    expect(again.body.meta).toEqual({ totalCount: 2, successful: 2, failed: 0 });
    expect(again.body.data[0]._id).toBe(annSub._id);
    expect((await subscriptionRows('digest-readers')).map((r: any) => r.external_subscriber_id)).toEqual(['ann', 'bob', 'cat']);
  });

  it('lists subscriptions with cursor paging and a subscriberId filter', async () => {
    await server.request('POST', '/v2/topics/pager/subscriptions', { body: { subscriberIds: ['ann', 'bob', 'cat'] } });
    const first = await server.request('GET', '/v2/topics/pager/subscriptions?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ totalCount: 3, previous: null, totalCountCapped: false });
    expect(first.body.data.map((s: any) => s.subscriber.subscriberId)).toEqual(['ann', 'bob']);
    expect(first.body.next).toBe(first.body.data[1]._id);
    const second = await server.request('GET', `/v2/topics/pager/subscriptions?limit=2&after=${first.body.next}`);
    expect(second.body.data.map((s: any) => s.subscriber.subscriberId)).toEqual(['cat']);
    expect(second.body.next).toBeNull();
    const one = await server.request('GET', '/v2/topics/pager/subscriptions?subscriberId=bob');
    expect(one.body.data.map((s: any) => s.subscriber.subscriberId)).toEqual(['bob']);
    expect((await server.request('GET', '/v2/topics/pager/subscriptions', { key: server.prodKey })).status).toBe(404);
    expect((await server.request('GET', '/v2/topics/nope/subscriptions')).status).toBe(404);
  });

  it('removes subscriptions, reporting unknown and unsubscribed subscribers', async () => {
    await server.request('POST', '/v2/topics/leavers/subscriptions', { body: { subscriberIds: ['ann', 'bob'] } });
    const foreign = await server.request('DELETE', '/v2/topics/leavers/subscriptions', { key: server.prodKey, body: { subscriberIds: ['ann'] } });
    expect(foreign.status).toBe(404);
    expect(await subscriptionRows('leavers')).toHaveLength(2);

    const response = await server.request('DELETE', '/v2/topics/leavers/subscriptions', { body: { subscriberIds: ['ann', 'dan', 'ghost'] } });
    expect(response.status).toBe(200);
    expect(response.body.meta).toEqual({ totalCount: 3, successful: 1, failed: 2 });
    expect(response.body.data.map((s: any) => s.subscriber.subscriberId)).toEqual(['ann']);
    expect(response.body.errors.map((e: any) => [e.subscriberId, e.code])).toEqual([
      ['dan', 'SUBSCRIPTION_NOT_FOUND'],
      ['ghost', 'SUBSCRIBER_NOT_FOUND'],
    ]);
    expect((await subscriptionRows('leavers')).map((r: any) => r.external_subscriber_id)).toEqual(['bob']);
    expect((await server.request('DELETE', '/v2/topics/nope/subscriptions', { body: { subscriberIds: ['ann'] } })).status).toBe(404);
  });

  it('400 for a body without subscribers or with more than 100', async () => {
    expect((await server.request('POST', '/v2/topics/x/subscriptions', { body: {} })).status).toBe(400);
    expect((await server.request('POST', '/v2/topics/x/subscriptions', { body: { subscriberIds: [] } })).status).toBe(400);
    const tooMany = Array.from({ length: 101 }, (_, i) => `s${i}`);
    expect((await server.request('POST', '/v2/topics/x/subscriptions', { body: { subscriberIds: tooMany } })).status).toBe(400);
    expect(await server.deps.store.topics.getByKey(server.devEnvironmentId, 'x')).toBeUndefined();
  });
});
