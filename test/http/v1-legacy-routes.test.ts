import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorBody } from '../helpers/shape.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The v1 routes of the legacy `@novu/node` SDK through real HTTP: bad input is a 400 naming the field and changes
 * nothing; another environment's record is a 404 and is never changed. (The happy paths run through the SDK in
 * test/sdk/novu-node-*.test.ts.)
 */
let server: TestServer;
let messageId: string;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  await server.request('POST', '/v1/integrations', { body: { providerId: 'novu', channel: 'in_app', active: true } });
  await server.request('POST', '/v2/workflows', {
    body: { workflowId: 'legacy-inbox', name: 'Legacy', active: true, steps: [{ name: 'inbox', type: 'in_app', controlValues: { body: 'Hi' } }] },
  });
  await server.request('POST', '/v1/subscribers', { body: { subscriberId: 'legacy-dev', firstName: 'Dev' } });
  await server.request('POST', '/v1/topics', { body: { key: 'legacy-topic', name: 'Legacy' } });
  await server.request('POST', '/v1/topics/legacy-topic/subscribers', { body: { subscribers: ['legacy-dev'] } });
  await server.request('POST', '/v1/events/trigger', { body: { name: 'legacy-inbox', to: 'legacy-dev', payload: {}, transactionId: 'legacy-tx' } });
  await server.waitForIdle();
  for (const deadline = Date.now() + 10_000; ; ) {
    const listed = await server.request('GET', '/v1/messages?subscriberId=legacy-dev');
    if (listed.body.data.length > 0) {
      messageId = listed.body.data[0]._id;
      break;
    }
    if (Date.now() > deadline) throw new Error('message did not arrive');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
});
afterAll(async () => server?.close());

/** A snapshot of everything these routes could change, read through other routes. */
async function snapshot() {
  const [subscriber, topic, members, messages] = await Promise.all([
    server.request('GET', '/v2/subscribers/legacy-dev'),
    server.request('GET', '/v2/topics/legacy-topic'),
    server.request('GET', '/v2/topics/legacy-topic/subscriptions'),
    server.request('GET', '/v1/messages?limit=100'),
  ]);
  const subscribers = await server.request('GET', '/v2/subscribers?limit=100');
  return [subscriber.body, topic.body, members.body, messages.body, subscribers.body.totalCount];
}

async function expect400(method: string, path: string, body: unknown, field: RegExp): Promise<void> {
  const response = await server.request(method, path, body === undefined ? {} : { body });
  expect(response.status, `${method} ${path} ${JSON.stringify(body)}: ${response.text}`).toBe(400);
  expectErrorBody(response.body, 400);
  const messages = Array.isArray(response.body.message) ? response.body.message : [response.body.message];
  expect(messages.join(' | '), `${method} ${path} ${JSON.stringify(body)}`).toMatch(field);
}

describe('bad input: 400 naming the field, nothing changed', () => {
  it('v1 subscribers', async () => {
    const before = await snapshot();
    await expect400('POST', '/v1/subscribers', { firstName: 'No id' }, /subscriberId is required/);
    await expect400('POST', '/v1/subscribers', { subscriberId: 'legacy-x', email: 'nope' }, /email must be an email/);
    await expect400('POST', '/v1/subscribers', { subscriberId: 'legacy-x', firstName: 5 }, /firstName must be string/);
    await expect400('POST', '/v1/subscribers', { subscriberId: 'legacy-x', timezone: 'Mars/Olympus' }, /timezone/);
    await expect400('GET', '/v1/subscribers?limit=0', undefined, /limit must be >= 1/);
    await expect400('GET', '/v1/subscribers?limit=101', undefined, /limit must be <= 100/);
    await expect400('GET', '/v1/subscribers?page=-1', undefined, /page must be >= 0/);
    await expect400('PUT', '/v1/subscribers/legacy-dev', { email: 'nope' }, /email must be an email/);
    await expect400('PUT', '/v1/subscribers/legacy-dev', { locale: 12 }, /locale must be string/);
    await expect400('POST', '/v1/subscribers/bulk', {}, /subscribers is required/);
    await expect400('POST', '/v1/subscribers/bulk', { subscribers: [] }, /subscribers must NOT have fewer than 1 items/);
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ subscriberId: `legacy-bulk-${i}` }));
    await expect400('POST', '/v1/subscribers/bulk', { subscribers: tooMany }, /subscribers must NOT have more than 500 items/);
    await expect400('POST', '/v1/subscribers/bulk', { subscribers: [{ subscriberId: 'ok-1' }, { firstName: 'x' }] }, /subscribers\.1\.subscriberId is required/);
    expect(await snapshot()).toEqual(before);
  });

  it('v1 topics', async () => {
    const before = await snapshot();
    await expect400('POST', '/v1/topics', { key: 'legacy-new' }, /name is required/);
    await expect400('POST', '/v1/topics', { key: 'has space', name: 'X' }, /key must match pattern/);
    await expect400('GET', '/v1/topics?pageSize=0', undefined, /pageSize must be >= 1/);
    await expect400('GET', '/v1/topics?page=x', undefined, /page must be integer/);
    await expect400('PATCH', '/v1/topics/legacy-topic', {}, /name is required/);
    await expect400('PATCH', '/v1/topics/legacy-topic', { name: '' }, /name must NOT have fewer than 1 characters/);
    await expect400('POST', '/v1/topics/legacy-topic/subscribers', {}, /subscribers is required/);
    await expect400('POST', '/v1/topics/legacy-topic/subscribers', { subscribers: [] }, /subscribers must NOT have fewer than 1 items/);
    await expect400('POST', '/v1/topics/legacy-topic/subscribers', { subscribers: [7] }, /subscribers\.0 must be string/);
    await expect400('POST', '/v1/topics/legacy-topic/subscribers/removal', { subscribers: 'legacy-dev' }, /subscribers must be array/);
    expect(await snapshot()).toEqual(before);
  });

  it('legacy inbox routes', async () => {
    const before = await snapshot();
    const path = '/v1/subscribers/legacy-dev/messages';
    await expect400('POST', `${path}/markAs`, { messageId, mark: {} }, /mark must contain seen or read/);
    await expect400('POST', `${path}/markAs`, { mark: { read: true } }, /messageId is required/);
    await expect400('POST', `${path}/markAs`, { messageId }, /mark is required/);
    await expect400('POST', `${path}/markAs`, { messageId, mark: { read: 'yes' } }, /mark\.read must be boolean/);
    await expect400('POST', `${path}/markAs`, { messageId: [], mark: { seen: true } }, /messageId/);
    await expect400('POST', `${path}/mark-all`, {}, /markAs is required/);
    await expect400('POST', `${path}/mark-all`, { markAs: 'archived' }, /markAs must be one of the following values: read, seen, unread, unseen/);
    await expect400('POST', `${path}/mark-all`, { markAs: 'read', feedIdentifier: 5 }, /feedIdentifier must be string,array/);
    await expect400('GET', '/v1/subscribers/legacy-dev/notifications/unseen?seen=maybe', undefined, /seen must be boolean/);
    await expect400('DELETE', '/v1/messages/transaction/legacy-tx?channel=fax', undefined, /channel must be one of the following values/);
    expect(await snapshot()).toEqual(before);
  });
});

describe('unknown records and other environments: 404, nothing changed', () => {
  it('every new route', async () => {
    const before = await snapshot();
    const prod = { key: server.prodKey };
    const cases: Array<[string, string, unknown?]> = [
      ['GET', '/v1/subscribers/legacy-dev'],
      ['PUT', '/v1/subscribers/legacy-dev', { firstName: 'Prod' }],
      ['DELETE', '/v1/subscribers/legacy-dev'],
      ['GET', '/v1/topics/legacy-topic'],
      ['PATCH', '/v1/topics/legacy-topic', { name: 'Prod' }],
      ['DELETE', '/v1/topics/legacy-topic'],
      ['POST', '/v1/topics/legacy-topic/subscribers/removal', { subscribers: ['legacy-dev'] }],
      ['GET', '/v1/topics/legacy-topic/subscribers/legacy-dev'],
      ['POST', '/v1/subscribers/legacy-dev/messages/markAs', { messageId, mark: { read: true } }],
      ['POST', '/v1/subscribers/legacy-dev/messages/mark-all', { markAs: 'read' }],
      ['GET', '/v1/subscribers/legacy-dev/notifications/unseen?seen=true'],
      ['DELETE', '/v1/messages/transaction/legacy-tx'],
    ];
    for (const [method, path, body] of cases) {
      const response = await server.request(method, path, { ...prod, ...(body !== undefined ? { body } : {}) });
      expect(response.status, `${method} ${path}`).toBe(404);
      expectErrorBody(response.body, 404);
    }
    // in the caller's own environment: unknown records
    const own: Array<[string, string, unknown?]> = [
      ['GET', '/v1/subscribers/nobody'],
      ['GET', '/v1/topics/no-topic'],
      ['GET', '/v1/topics/legacy-topic/subscribers/nobody'],
      ['POST', '/v1/subscribers/legacy-dev/messages/markAs', { messageId: '0123456789abcdef01234567', mark: { read: true } }],
      ['POST', '/v1/subscribers/nobody/messages/mark-all', { markAs: 'read' }],
      ['DELETE', '/v1/messages/transaction/legacy-tx?channel=email'],
      ['DELETE', '/v1/messages/transaction/no-such-tx'],
    ];
    for (const [method, path, body] of own) {
      const response = await server.request(method, path, body !== undefined ? { body } : {});
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
  });
});
