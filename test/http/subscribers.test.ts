import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorBody, expectIsoTimestamp, expectRecordId } from '../helpers/shape.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Every field of the spec's Subscriber table, with its type. */
function expectSubscriberShape(subscriber: any): void {
  expectRecordId(subscriber._id);
  expect(typeof subscriber.subscriberId).toBe('string');
  expectRecordId(subscriber._organizationId);
  expectRecordId(subscriber._environmentId);
  expect(typeof subscriber.deleted).toBe('boolean');
  expectIsoTimestamp(subscriber.createdAt);
  expectIsoTimestamp(subscriber.updatedAt);
  for (const field of ['firstName', 'lastName', 'email', 'phone', 'avatar', 'locale', 'timezone']) {
    if (subscriber[field] !== undefined) expect(subscriber[field] === null || typeof subscriber[field] === 'string').toBe(true);
  }
  expect(Array.isArray(subscriber.channels)).toBe(true);
  expect(Array.isArray(subscriber.topics)).toBe(true);
  expect(subscriber.isOnline === null || typeof subscriber.isOnline === 'boolean').toBe(true);
  if (subscriber.lastOnlineAt !== null) expectIsoTimestamp(subscriber.lastOnlineAt);
  expect(Number.isInteger(subscriber.__v)).toBe(true);
  expect(subscriber.data === null || typeof subscriber.data === 'object').toBe(true);
}

async function create(body: Record<string, unknown>, key?: string) {
  const response = await server.request('POST', '/v2/subscribers', { body, key });
  expect(response.status).toBe(201);
  return response.body.data;
}

async function stored(subscriberId: string, environmentId = server.devEnvironmentId) {
  return server.deps.store.subscribers.findBySubscriberId(environmentId, subscriberId);
}

describe('POST /v2/subscribers', () => {
  it('creates a subscriber with every field of the spec', async () => {
    const response = await server.request('POST', '/v2/subscribers', {
      body: {
        subscriberId: 'create-1', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+15550100',
        avatar: 'https://example.com/a.png', locale: 'en-GB', timezone: 'Europe/London', data: { plan: 'pro', seats: 3 },
      },
    });
    expect(response.status).toBe(201);
    const subscriber = response.body.data;
    expectSubscriberShape(subscriber);
    expect(subscriber).toMatchObject({
      subscriberId: 'create-1', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+15550100',
      avatar: 'https://example.com/a.png', locale: 'en-GB', timezone: 'Europe/London', data: { plan: 'pro', seats: 3 },
      channels: [], topics: [], isOnline: null, lastOnlineAt: null, __v: 0, deleted: false,
      _environmentId: server.devEnvironmentId,
    });
    expect(await stored('create-1')).toEqual(subscriber);
  });

  it('updates an existing subscriberId (absent fields unchanged) and keeps its _id', async () => {
    const first = await create({ subscriberId: 'upsert-1', firstName: 'Ada', email: 'ada@example.com' });
    const second = await create({ subscriberId: 'upsert-1', firstName: 'Grace' });
    expect(second).toMatchObject({ _id: first._id, firstName: 'Grace', email: 'ada@example.com', __v: 1 });
    expect((await stored('upsert-1'))!.firstName).toBe('Grace');
  });

  it('answers 409 for an existing subscriberId with ?failIfExists=true and changes nothing', async () => {
    const first = await create({ subscriberId: 'fail-1', firstName: 'Ada' });
    const response = await server.request('POST', '/v2/subscribers?failIfExists=true', { body: { subscriberId: 'fail-1', firstName: 'Eve' } });
    expect(response.status).toBe(409);
    expectErrorBody(response.body, 409);
    expect(await stored('fail-1')).toEqual(first);
  });

  it('rejects bad input with 400/415', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /subscriberId is required/],
      [{ subscriberId: '' }, /subscriberId/],
      [{ subscriberId: 'x', email: 'not-an-email' }, /email must be an email/],
      [{ subscriberId: 'x', locale: 'not a locale!' }, /locale/],
      [{ subscriberId: 'x', timezone: 'Mars/Olympus' }, /timezone/],
      [{ subscriberId: 'x', data: 'text' }, /data/],
      [{ subscriberId: 'x', firstName: { a: 1 } }, /firstName/],
      [{ subscriberId: 'x', firstName: 5 }, /firstName/],
      [{ subscriberId: 5 }, /subscriberId/],
    ];
    for (const [body, message] of cases) {
      const response = await server.request('POST', '/v2/subscribers', { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expectErrorBody(response.body, 400);
      expect(JSON.stringify(response.body.message)).toMatch(message);
    }
    expect(await stored('x')).toBeUndefined();
    const malformed = await server.request('POST', '/v2/subscribers', { rawBody: '{"subscriberId":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    const textBody = await server.request('POST', '/v2/subscribers', { rawBody: 'subscriberId=x', headers: { 'content-type': 'text/plain' } });
    expect(textBody.status).toBe(415);
    expectErrorBody(textBody.body, 415);
  });

  it('answers 401 without a key', async () => {
    const response = await server.request('POST', '/v2/subscribers', { body: { subscriberId: 'nokey' }, key: null });
    expect(response.status).toBe(401);
    expect(await stored('nokey')).toBeUndefined();
  });
});

describe('GET /v2/subscribers/{subscriberId}', () => {
  it('returns the subscriber', async () => {
    const created = await create({ subscriberId: 'get-1', firstName: 'Ada' });
    const response = await server.request('GET', '/v2/subscribers/get-1');
    expect(response.status).toBe(200);
    expectSubscriberShape(response.body.data);
    expect(response.body.data).toEqual(created);
  });

  it('answers 404 naming an unknown subscriber', async () => {
    const response = await server.request('GET', '/v2/subscribers/nobody');
    expect(response.status).toBe(404);
    expectErrorBody(response.body, 404, '/v2/subscribers/nobody');
    expect(response.body.message).toBe('Subscriber: nobody was not found');
  });
});

describe('PATCH /v2/subscribers/{subscriberId}', () => {
  it('changes the given fields, clears null ones, leaves absent ones, bumps __v and updatedAt', async () => {
    const created = await create({ subscriberId: 'patch-1', firstName: 'Ada', lastName: 'Byron', email: 'ada@example.com', data: { a: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const response = await server.request('PATCH', '/v2/subscribers/patch-1', {
      body: { lastName: 'Lovelace', email: null, locale: 'fr-CA', timezone: 'America/Toronto', data: { b: 2 } },
    });
    expect(response.status).toBe(200);
    const patched = response.body.data;
    expectSubscriberShape(patched);
    expect(patched).toMatchObject({
      _id: created._id, firstName: 'Ada', lastName: 'Lovelace', email: null, locale: 'fr-CA', timezone: 'America/Toronto',
      data: { b: 2 }, __v: created.__v + 1, createdAt: created.createdAt,
    });
    expect(patched.updatedAt > created.updatedAt).toBe(true);
    expect(await stored('patch-1')).toEqual(patched);

    const cleared = await server.request('PATCH', '/v2/subscribers/patch-1', { body: { data: null, firstName: null } });
    expect(cleared.body.data).toMatchObject({ data: null, firstName: null, lastName: 'Lovelace', __v: created.__v + 2 });
  });

  it('validates email, locale (BCP 47) and timezone (IANA), naming each field, and changes nothing', async () => {
    const created = await create({ subscriberId: 'patch-bad', email: 'ada@example.com' });
    const response = await server.request('PATCH', '/v2/subscribers/patch-bad', {
      body: { email: 'nope', locale: 'en_US_bad!', timezone: 'Europe/Atlantis' },
    });
    expect(response.status).toBe(400);
    expectErrorBody(response.body, 400);
    expect(response.body.message).toEqual([
      'email must be an email',
      'locale must be a valid BCP 47 language tag',
      'timezone must be a valid IANA time zone',
    ]);
    for (const body of [{ firstName: ['x'] }, { data: [1, 2] }, { data: 5 }]) {
      const wrongType = await server.request('PATCH', '/v2/subscribers/patch-bad', { body });
      expect(wrongType.status, JSON.stringify(body)).toBe(400);
    }
    const malformed = await server.request('PATCH', '/v2/subscribers/patch-bad', { rawBody: '{', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    const textBody = await server.request('PATCH', '/v2/subscribers/patch-bad', { rawBody: 'x', headers: { 'content-type': 'text/plain' } });
    expect(textBody.status).toBe(415);
    expect(await stored('patch-bad')).toEqual(created);
  });

  it('answers 404 for an unknown subscriber and for another environment, leaving it unchanged', async () => {
    const created = await create({ subscriberId: 'patch-dev', firstName: 'Ada' });
    const unknown = await server.request('PATCH', '/v2/subscribers/nobody', { body: { firstName: 'X' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('Subscriber: nobody was not found');
    const other = await server.request('PATCH', '/v2/subscribers/patch-dev', { body: { firstName: 'Mallory' }, key: server.prodKey });
    expect(other.status).toBe(404);
    expect(await stored('patch-dev')).toEqual(created);
    expect(await stored('patch-dev', server.prodEnvironmentId)).toBeUndefined();
  });
});

describe('PATCH /v1/subscribers/{subscriberId}/online-status', () => {
  it('sets isOnline, and stamps lastOnlineAt when it becomes false', async () => {
    const created = await create({ subscriberId: 'online-1' });
    const online = await server.request('PATCH', '/v1/subscribers/online-1/online-status', { body: { isOnline: true } });
    expect(online.status).toBe(200);
    expectSubscriberShape(online.body.data);
    expect(online.body.data).toMatchObject({ isOnline: true, lastOnlineAt: null, __v: created.__v + 1 });

    const before = Date.now();
    const offline = await server.request('PATCH', '/v1/subscribers/online-1/online-status', { body: { isOnline: false } });
    expect(offline.status).toBe(200);
    expect(offline.body.data.isOnline).toBe(false);
    expectIsoTimestamp(offline.body.data.lastOnlineAt);
    expect(Date.parse(offline.body.data.lastOnlineAt)).toBeGreaterThanOrEqual(before - 1);
    expect(await stored('online-1')).toEqual(offline.body.data);
  });

  it('requires a boolean isOnline', async () => {
    const created = await create({ subscriberId: 'online-bad' });
    for (const body of [{}, { isOnline: 'maybe' }, { isOnline: 'true' }, { isOnline: 1 }, { isOnline: { on: true } }, { isOnline: null }]) {
      const response = await server.request('PATCH', '/v1/subscribers/online-bad/online-status', { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expectErrorBody(response.body, 400);
    }
    const textBody = await server.request('PATCH', '/v1/subscribers/online-bad/online-status', { rawBody: 'true', headers: { 'content-type': 'text/plain' } });
    expect(textBody.status).toBe(415);
    expect(await stored('online-bad')).toEqual(created);
  });

  it('answers 404 for an unknown subscriber and another environment', async () => {
    const created = await create({ subscriberId: 'online-dev' });
    expect((await server.request('PATCH', '/v1/subscribers/nobody/online-status', { body: { isOnline: true } })).status).toBe(404);
    const other = await server.request('PATCH', '/v1/subscribers/online-dev/online-status', { body: { isOnline: true }, key: server.prodKey });
    expect(other.status).toBe(404);
    expect(other.body.message).toBe('Subscriber: online-dev was not found');
    expect(await stored('online-dev')).toEqual(created);
  });
});

describe('DELETE /v2/subscribers/{subscriberId}', () => {
  it('deletes: acknowledged, then 404, gone from the list, and the subscriberId can be reused', async () => {
    const created = await create({ subscriberId: 'delete-1', email: 'delete-1@example.com' });
    const other = await server.request('DELETE', '/v2/subscribers/delete-1', { key: server.prodKey });
    expect(other.status).toBe(404);
    expect(await stored('delete-1')).toEqual(created);

    const response = await server.request('DELETE', '/v2/subscribers/delete-1');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: { acknowledged: true, status: 'deleted' } });
    expect(await stored('delete-1')).toBeUndefined();
    expect((await server.request('GET', '/v2/subscribers/delete-1')).status).toBe(404);
    expect((await server.request('DELETE', '/v2/subscribers/delete-1')).status).toBe(404);
    const list = await server.request('GET', '/v2/subscribers?subscriberId=delete-1');
    expect(list.body.data).toEqual([]);

    const again = await create({ subscriberId: 'delete-1' });
    expect(again._id).not.toBe(created._id);
    expect(again.email).toBeNull();
  });
});

describe('GET /v2/subscribers', () => {
  it('lists newest first with page fields and filters by email, name and subscriberId', async () => {
    const fresh = await startTestServer();
    try {
      const make = async (body: Record<string, unknown>) => {
        const response = await fresh.request('POST', '/v2/subscribers', { body });
        expect(response.status).toBe(201);
        return response.body.data;
      };
      const ada = await make({ subscriberId: 'l-ada', firstName: 'Ada', lastName: 'Lovelace', email: 'Ada@Example.com' });
      const grace = await make({ subscriberId: 'l-grace', firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' });
      const alan = await make({ subscriberId: 'l-alan', firstName: 'Alan', lastName: 'Turing_%' });
      await fresh.request('POST', '/v2/subscribers', { body: { subscriberId: 'prod-only', firstName: 'Ada' }, key: fresh.prodKey });

      const all = await fresh.request('GET', '/v2/subscribers');
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ page: 0, pageSize: 10, hasMore: false, totalCount: 3 });
      expect(all.body.data.map((s: any) => s.subscriberId)).toEqual(['l-alan', 'l-grace', 'l-ada']);
      all.body.data.forEach(expectSubscriberShape);

      const ids = async (query: string) => (await fresh.request('GET', `/v2/subscribers?${query}`)).body.data.map((s: any) => s.subscriberId);
      expect(await ids('email=ada@example.com')).toEqual(['l-ada']);
      expect(await ids('name=lovelace')).toEqual(['l-ada']);
      expect(await ids('name=GRACE')).toEqual(['l-grace']);
      expect(await ids('name=ada%20love')).toEqual(['l-ada']);
      expect(await ids('name=a')).toEqual(['l-alan', 'l-grace', 'l-ada']);
      expect(await ids('name=_%25')).toEqual(['l-alan']);
      expect(await ids('subscriberId=l-grace')).toEqual(['l-grace']);
      expect(await ids('subscriberId=l-grace&name=ada')).toEqual([]);

      const page1 = await fresh.request('GET', '/v2/subscribers?limit=2&page=0');
      expect(page1.body).toMatchObject({ page: 0, pageSize: 2, hasMore: true, totalCount: 3 });
      expect(page1.body.data.map((s: any) => s._id)).toEqual([alan._id, grace._id]);
      const page2 = await fresh.request('GET', '/v2/subscribers?limit=2&page=1');
      expect(page2.body).toMatchObject({ page: 1, pageSize: 2, hasMore: false, totalCount: 3 });
      expect(page2.body.data.map((s: any) => s._id)).toEqual([ada._id]);

      // Novu v2 cursors alongside the page fields.
      expect(page1.body).toMatchObject({ next: grace._id, previous: null, totalCountCapped: false });
      const afterCursor = await fresh.request('GET', `/v2/subscribers?limit=2&after=${grace._id}`);
      expect(afterCursor.body).toMatchObject({ next: null, previous: ada._id, hasMore: false, totalCount: 3 });
      expect(afterCursor.body.data.map((s: any) => s._id)).toEqual([ada._id]);
      const beforeCursor = await fresh.request('GET', `/v2/subscribers?limit=2&before=${ada._id}`);
      expect(beforeCursor.body).toMatchObject({ next: grace._id, previous: null, hasMore: true });
      expect(beforeCursor.body.data.map((s: any) => s._id)).toEqual([alan._id, grace._id]);
      const beforeOne = await fresh.request('GET', `/v2/subscribers?limit=1&before=${ada._id}`);
      expect(beforeOne.body).toMatchObject({ next: grace._id, previous: grace._id });
      expect(await ids('orderDirection=ASC')).toEqual(['l-ada', 'l-grace', 'l-alan']);
      expect(await ids(`orderDirection=ASC&after=${ada._id}&limit=1`)).toEqual(['l-grace']);
      expect(await ids('phone=%2B1555')).toEqual([]);

      for (const query of ['limit=0', 'limit=101', 'page=-1', 'page=abc', 'limit=1.5', 'after=nope', `after=${ada._id.replace(/^./, 'f')}`, 'orderDirection=UP', `after=${ada._id}&before=${ada._id}`]) {
        const response = await fresh.request('GET', `/v2/subscribers?${query}`);
        expect(response.status, query).toBe(400);
        expectErrorBody(response.body, 400);
      }
      const prod = await fresh.request('GET', '/v2/subscribers', { key: fresh.prodKey });
      expect(prod.body.data.map((s: any) => s.subscriberId)).toEqual(['prod-only']);
    } finally {
      await fresh.close();
    }
  });
});
