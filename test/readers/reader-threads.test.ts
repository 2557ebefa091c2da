import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { ReaderPool } from '../../src/readers/reader-pool.js';
import { serializeMessagePage } from '../../src/http/message-page-serializer.js';
import { listMessages } from '../../src/usecases/messages/list-messages.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createWorkflow, trigger } from '../worker/engine-helpers.js';

/**
 * Reader threads (src/readers/): embedded, the list pages are read and written on threads with read-only connections.
 * Every page is compared over real HTTP with the page of the same server's data written on the main thread (a second
 * app over the same deps, without threads): status, headers that describe the body, and the bytes. Scaled out there
 * are no threads (PostgreSQL); the comparisons still run and must hold trivially.
 */
let server: TestServer;
let plain: FastifyInstance;
let plainUrl: string;
let pool: ReaderPool | undefined;
const transactionIds: string[] = [];

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20', HERALD_READER_THREADS: '2' } });
  pool = server.container.readers as ReaderPool | undefined;
  if (!server.config.databaseUrl) expect(pool).toBeInstanceOf(ReaderPool);
  plain = await buildApp(server.deps, {});
  plainUrl = await plain.listen({ host: '127.0.0.1', port: 0 });
  const inbox = (name: string) => ({ name, type: 'in_app', controlValues: { subject: `Hi {{ subscriber.firstName }} (${name})`, body: 'Order {{ payload.orderId }} é ✓ "q"' } });
  await createWorkflow(server, { workflowId: 'one-step', tags: ['a'], steps: [inbox('inbox')] });
  await createWorkflow(server, { workflowId: 'two-steps', steps: [inbox('first'), { name: 'mail', type: 'email', controlValues: { subject: 'S {{ payload.orderId }}', body: 'B' } }] });
  await createWorkflow(server, { workflowId: 'waits', steps: [{ name: 'wait', type: 'delay', controlValues: { type: 'regular', amount: 1, unit: 'hours' } }, inbox('after')] });
  for (const subscriberId of ['ann', 'bob', 'cy']) {
    await server.request('POST', '/v2/subscribers', { body: { subscriberId, firstName: subscriberId.toUpperCase(), email: `${subscriberId}@example.com` } });
  }
  for (const [index, name] of ['one-step', 'two-steps', 'waits', 'one-step', 'two-steps'].entries()) {
    const context = index % 2 === 0 ? { tenant: 'acme' } : { tenant: 'globex', region: 'eu' };
    const response = await trigger(server, { name, to: index === 3 ? ['ann'] : ['ann', 'bob', 'cy'], payload: { orderId: `o-${index}` }, context });
    expect(response.status, response.text).toBe(201);
    transactionIds.push(response.body.data.transactionId);
  }
  await server.waitForIdle({ ignoreDelayed: true });
});
afterAll(async () => {
  await plain?.close();
  await server?.close();
});

const sqlite = () => !server.config.databaseUrl;

async function get(base: string, path: string) {
  const response = await fetch(base + path, { headers: { authorization: `ApiKey ${server.devKey}` } });
  let text = await response.text();
  // An error body carries the time it was written (API-CONVENTIONS.md); the two answers are a few ms apart.
  if (response.status >= 400) text = text.replace(/"timestamp":"[^"]+"/, '"timestamp":"T"');
  return { status: response.status, type: response.headers.get('content-type'), length: response.status >= 400 ? 'n' : response.headers.get('content-length'), text };
}

/** The page from the threaded server and from the main thread's app: the same answer, byte for byte. */
async function expectSamePage(path: string): Promise<{ status: number; text: string }> {
  const threaded = await get(server.url, path);
  const main = await get(plainUrl, path);
  expect(threaded, path).toEqual(main);
  return threaded;
}

const MESSAGE_QUERIES = () => [
  '',
  '?limit=3',
  '?page=1&limit=2',
  '?subscriberId=ann',
  '?subscriberId=ann&limit=50',
  '?subscriberId=bob&channel=in_app',
  '?channel=email',
  '?channel=in_app&page=2&limit=2',
  `?transactionId=${transactionIds[0]}`,
  `?transactionId=${transactionIds[0]}&transactionId=${transactionIds[1]}&limit=50`,
  '?contextKeys=tenant:acme',
  '?contextKeys=tenant:globex&contextKeys=region:eu',
  '?page=100&limit=10',
  '?subscriberId=nobody',
  '?subscriberId=ann&page=7&limit=10',
  // Refused: by the schema on the main thread, by the use case (contextKeys) on the thread.
  '?contextKeys=nocolon',
  '?contextKeys=tenant:acme&contextKeys=bad',
  '?page=-1',
];

const EVENT_QUERIES = () => [
  '',
  '?limit=2&page=1',
  '?limit=50',
  '?channels=in_app',
  '?channels=email&channels=in_app&limit=3',
  '?subscriberIds=ann',
  `?transactionId=${transactionIds[2]}`,
  '?contextKeys=tenant:acme',
  '?status=pending',
  '?status=completed&limit=2',
  '?before=2100-01-01T00:00:00.000Z&limit=50',
  '?after=2000-01-01T00:00:00.000Z&before=2100-01-01T00:00:00.000Z',
  '?page=5000&limit=1',
  // Refused by the use case (a ValidationError thrown on the thread) and by the schema.
  '?after=yesterday',
  '?before=not-a-date',
  '?after=2100-01-01T00:00:00.000Z&before=2000-01-01T00:00:00.000Z',
  '?contextKeys=nocolon',
  '?limit=0',
];

describe('reader threads', () => {
  it('write every message page byte for byte as the main thread does, errors with the same 4xx body', async () => {
    const before = { ...pool?.counts };
    let refused = 0;
    for (const query of MESSAGE_QUERIES()) {
      const page = await expectSamePage(`/v1/messages${query}`);
      if (page.status === 400) refused++;
      else expect(page.status, query).toBe(200);
      if (query.includes('bad') || query.includes('nocolon') || query.includes('page=-1')) expect(page.status, query).toBe(400);
    }
    expect(refused).toBe(3);
    if (pool) {
      // Every page the schema let through was answered by a thread (the refused contextKeys as a ValidationError).
      expect(pool.counts.threads - before.threads!).toBe(MESSAGE_QUERIES().length - 1);
      expect(pool.counts.mainThread).toBe(before.mainThread);
    }
  });

  it('write every event page byte for byte, with and without kept texts', async () => {
    const pages = async () => {
      const texts: string[] = [];
      for (const query of EVENT_QUERIES()) texts.push((await expectSamePage(`/v1/notifications${query}`)).text);
      return texts;
    };
    const before = { ...pool?.counts };
    if (sqlite()) expect(Number((await server.container.db.selectFrom('notification_texts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBeGreaterThan(0);
    const withTexts = await pages();
    await server.container.db.deleteFrom('notification_texts').execute();
    const withoutTexts = await pages();
    expect(withoutTexts).toEqual(withTexts);
    expect(withTexts.filter((text) => text.includes('"statusCode":400'))).toHaveLength(5);
    if (pool) {
      expect(pool.counts.threads - before.threads!).toBe(2 * (EVENT_QUERIES().length - 1));
      expect(pool.counts.mainThread).toBe(before.mainThread);
    }
  });

  it('see every acknowledged write at the next page: mark-as, delete, new messages and their counters', async () => {
    const ann = async () => JSON.parse((await expectSamePage('/v1/messages?subscriberId=ann&channel=in_app&limit=50')).text);
    const first = await ann();
    const [message] = first.data;
    for (const markAs of ['read', 'unread', 'seen', 'unseen', 'read']) {
      const marked = await server.request('POST', '/v1/subscribers/ann/messages/mark-as', { body: { messageId: message._id, markAs } });
      expect(marked.status, marked.text).toBe(201);
      const listed = (await ann()).data.find((entry: any) => entry._id === message._id);
      expect(listed.read, markAs).toBe(markAs === 'read' ? true : markAs === 'unread' ? false : listed.read);
      if (markAs === 'seen' || markAs === 'unseen') expect(listed.seen, markAs).toBe(markAs === 'seen');
    }
    const deleted = await server.request('DELETE', `/v1/messages/${message._id}`);
    expect(deleted.status, deleted.text).toBe(200);
    const after = await ann();
    expect(after.totalCount).toBe(first.totalCount - 1);
    expect(after.data.map((entry: any) => entry._id)).not.toContain(message._id);
    // New messages, each acknowledged (its delivery job done), in the list and its totalCount (the commit's counter sums).
    for (let round = 0; round < 3; round++) {
      const all = JSON.parse((await expectSamePage('/v1/messages?limit=1')).text).totalCount;
      const response = await trigger(server, { name: 'one-step', to: ['ann', 'bob'], payload: { orderId: `rw-${round}` } });
      expect(response.status).toBe(201);
      await server.waitForIdle({ ignoreDelayed: true });
      const page = JSON.parse((await expectSamePage('/v1/messages?limit=1')).text);
      expect(page.totalCount).toBe(all + 2);
      expect(page.data[0].transactionId).toBe(response.body.data.transactionId);
      const events = JSON.parse((await expectSamePage(`/v1/notifications?transactionId=${response.body.data.transactionId}`)).text);
      expect(events.data).toHaveLength(2);
    }
  });

  it('read the subscriber records as stored now (no cache on the threads)', async () => {
    const updated = await server.request('PATCH', '/v2/subscribers/bob', { body: { firstName: 'Robert' } });
    expect(updated.status, updated.text).toBe(200);
    const page = JSON.parse((await expectSamePage('/v1/messages?subscriberId=bob&limit=50')).text);
    expect(page.data.length).toBeGreaterThan(0);
    for (const message of page.data) expect(message.subscriber.firstName).toBe('Robert');
  });

  it('answer every page while a thread is killed, and start another in its place', async () => {
    if (!pool) return;
    const ids = pool.threadIds();
    const paths = Array.from({ length: 30 }, (_, index) => (index % 2 ? '/v1/messages?subscriberId=ann' : '/v1/notifications?limit=5'));
    const expected = await Promise.all(paths.map((path) => get(plainUrl, path)));
    const answers = Promise.all(paths.map((path) => get(server.url, path)));
    await pool.kill(0);
    expect(await answers).toEqual(expected);
    // A page asked of a thread as it dies: answered undefined, so the route reads it on the main thread.
    const input = { caller: { kind: 'apiKey' as const, environmentId: server.devEnvironmentId, organizationId: '', actorId: '' }, page: 0, limit: 10 };
    const inFlight = pool.messagePage(input);
    const killing = pool.kill(1);
    const body = await inFlight;
    await killing;
    if (body !== undefined) expect(body.toString()).toBe(serializeMessagePage(await listMessages(server.deps, input)));
    const deadline = Date.now() + 10_000;
    while (pool.threadIds().some((id, index) => id === undefined || id === ids[index])) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const threads = pool.counts.threads;
    await expectSamePage('/v1/messages?subscriberId=ann');
    await expectSamePage('/v1/messages?subscriberId=bob');
    expect(pool.counts.threads).toBe(threads + 2);
  });

  it('leave the pages to the main thread once closed', async () => {
    if (!pool) return;
    const closing = new ReaderPool({ file: `${server.dataDir}/herald.sqlite`, threads: 1, clock: server.deps.clock });
    const input = { caller: { kind: 'apiKey' as const, environmentId: server.devEnvironmentId, organizationId: '', actorId: '' }, page: 0, limit: 10 };
    const body = await closing.messagePage(input);
    expect(body?.toString()).toBe(serializeMessagePage(await listMessages(server.deps, input)));
    await closing.close();
    expect(await closing.messagePage(input)).toBeUndefined();
    expect(closing.threadIds()).toEqual([undefined]);
  });
});
