import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { scaleoutModeRequested } from '../helpers/databases.js';
import { createWorkflow, detailTexts, eventsOf, messagesOf, trigger } from '../worker/engine-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ worker: true, env: { HERALD_QUEUE_POLL_MS: '20' } });
  await createWorkflow(server, {
    workflowId: 'welcome',
    name: 'Welcome',
    tags: ['onboarding'],
    severity: 'high',
    payloadSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
    steps: [
      {
        name: 'inbox',
        type: 'in_app',
        controlValues: { subject: 'Hi {{ subscriber.firstName }}', body: 'Order {{ payload.orderId }}', redirect: { url: 'https://example.com/{{ payload.orderId }}' } },
      },
    ],
  });
});
afterAll(async () => {
  await server?.close();
});

describe('POST /v1/events/trigger', () => {
  it('generates a time-ordered transactionId (UUID version 7) when the trigger names none', async () => {
    const first = await trigger(server, { name: 'welcome', to: 'tx-order', payload: { orderId: 'o-tx-1' } });
    await new Promise((resolve) => setTimeout(resolve, 2));
    const second = await trigger(server, { name: 'welcome', to: 'tx-order', payload: { orderId: 'o-tx-2' } });
    const ids = [first.body.data.transactionId as string, second.body.data.transactionId as string];
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ids[0]! < ids[1]!).toBe(true);
    await server.waitForIdle();
  });

  it('delivers an in-app message to an existing subscriber and records the event, job and details', async () => {
    await server.request('POST', '/v2/subscribers', { body: { subscriberId: 'ann', firstName: 'Ann', email: 'ann@example.com' } });
    const response = await trigger(server, { name: 'welcome', to: 'ann', payload: { orderId: 'o-1' }, context: { tenant: 'acme' } });
    expect(response.status, response.text).toBe(201);
    expect(response.body.data).toMatchObject({ acknowledged: true, status: 'processed' });
    const { transactionId } = response.body.data;
    expect(typeof transactionId).toBe('string');
    await server.waitForIdle();

    const events = await eventsOf(server, transactionId);
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({
      transactionId,
      channels: ['in_app'],
      subscriber: { subscriberId: 'ann', firstName: 'Ann', email: 'ann@example.com' },
      template: { name: 'Welcome', triggers: [{ type: 'event', identifier: 'welcome' }] },
      payload: { orderId: 'o-1' },
      to: { subscriberId: 'ann' },
      tags: ['onboarding'],
      severity: 'high',
      contextKeys: ['tenant:acme'],
    });
    expect(event.jobs).toHaveLength(1);
    expect(event.jobs[0]).toMatchObject({ type: 'in_app', status: 'completed', providerId: 'novu' });
    expect(detailTexts(event.jobs[0])).toEqual(['Pending: Step created', 'Queued: Step queued', 'Success: Message sent to the subscriber inbox']);

    const messages = await messagesOf(server, transactionId);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      channel: 'in_app',
      status: 'sent',
      subject: 'Hi Ann',
      content: 'Order o-1',
      read: false,
      seen: false,
      transactionId,
      cta: { type: 'redirect', data: { url: 'https://example.com/o-1' } },
      contextKeys: ['tenant:acme'],
      templateIdentifier: 'welcome',
      _notificationId: event._id,
    });
  });

  it('creates a subscriber given as an object and reaches each distinct recipient of an array once', async () => {
    const response = await trigger(server, {
      name: 'welcome',
      to: [{ subscriberId: 'new-bob', firstName: 'Bob', email: 'bob@example.com' }, 'cid', 'cid', { subscriberId: 'new-bob' }],
      payload: { orderId: 'o-2' },
    });
    expect(response.status, response.text).toBe(201);
    await server.waitForIdle();
    const { transactionId } = response.body.data;
    const events = await eventsOf(server, transactionId);
    expect(events.map((event) => event.subscriber.subscriberId).sort()).toEqual(['cid', 'new-bob']);
    const messages = await messagesOf(server, transactionId);
    expect(messages.map((message) => message.content)).toEqual(['Order o-2', 'Order o-2']);
    const bob = await server.request('GET', '/v2/subscribers/new-bob');
    expect(bob.body.data).toMatchObject({ subscriberId: 'new-bob', firstName: 'Bob', email: 'bob@example.com' });
    const bobMessages = messages.filter((message) => message.subject === 'Hi Bob');
    expect(bobMessages).toHaveLength(1);
  });

  it('reaches the subscribers of a topic and records the topic on the event', async () => {
    for (const subscriberId of ['t-1', 't-2']) await server.request('POST', '/v2/subscribers', { body: { subscriberId } });
    const topic = await server.request('POST', '/v2/topics', { body: { key: 'team', name: 'Team' } });
    expect(topic.status, topic.text).toBeLessThan(300);
    const added = await server.request('POST', '/v2/topics/team/subscriptions', { body: { subscriberIds: ['t-1', 't-2'] } });
    expect(added.status, added.text).toBeLessThan(300);
    const response = await trigger(server, { name: 'welcome', to: [{ type: 'Topic', topicKey: 'team' }, 't-1'], payload: { orderId: 'o-3' } });
    expect(response.status, response.text).toBe(201);
    await server.waitForIdle();
    const { transactionId } = response.body.data;
    const events = await eventsOf(server, transactionId);
    expect(events.map((event) => event.subscriber.subscriberId).sort()).toEqual(['t-1', 't-2']);
    for (const event of events) expect(event.topics).toEqual([{ _topicId: expect.any(String), topicKey: 'team' }]);
    const byTopic = await server.request('GET', '/v1/notifications?topicKey=team');
    expect(byTopic.body.data.map((event: any) => event.transactionId)).toEqual([transactionId, transactionId]);
    expect(await messagesOf(server, transactionId)).toHaveLength(2);
  });

  it('answers a reused transactionId with 201 and creates nothing new', async () => {
    const first = await trigger(server, { name: 'welcome', to: 'dup', payload: { orderId: 'o-4' }, transactionId: 'tx-dup' });
    const second = await trigger(server, { name: 'welcome', to: 'dup', payload: { orderId: 'o-5' }, transactionId: 'tx-dup' });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.data.transactionId).toBe('tx-dup');
    await server.waitForIdle();
    expect(await eventsOf(server, 'tx-dup')).toHaveLength(1);
    const messages = await messagesOf(server, 'tx-dup');
    expect(messages.map((message) => message.content)).toEqual(['Order o-4']);
  });

  it('answers a transactionId PostgreSQL cannot store (a NUL) with 400 and stores nothing, beside concurrent triggers', async () => {
    // Concurrent, so that on PostgreSQL the bad row shares a coalesced insert with good ones (trigger-repository).
    const [bad, ...good] = await Promise.all([
      trigger(server, { name: 'welcome', to: 'nul', payload: { orderId: 'o-n' }, transactionId: 'tx-nul\u0000' }),
      ...Array.from({ length: 8 }, (_, i) => trigger(server, { name: 'welcome', to: `nul-${i}`, payload: { orderId: 'o-g' }, transactionId: `tx-nul-good-${i}` })),
    ]);
    expect(good.map((response) => response.status)).toEqual(Array(8).fill(201));
    if (scaleoutModeRequested()) {
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: [expect.stringContaining('NUL')] });
      await server.waitForIdle();
      const messages = await server.request('GET', '/v1/messages?subscriberId=nul');
      expect(messages.body.data).toEqual([]);
    } else {
      // SQLite stores the text as it is.
      expect(bad.status).toBe(201);
    }
  });

  it('refuses an unknown workflow with 422 and a payload failing the schema with 400', async () => {
    const unknown = await trigger(server, { name: 'nope', to: 'ann', payload: {} });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors.name).toMatchObject({ value: 'nope' });
    const invalid = await trigger(server, { name: 'welcome', to: 'ann', payload: { orderId: 5 } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message.join(' ')).toContain('orderId');
    const tooMany = await trigger(server, { name: 'welcome', to: Array.from({ length: 101 }, (_, i) => `s${i}`), payload: { orderId: 'x' } });
    expect(tooMany.status).toBe(400);
  });

  it('accepts bulk triggers one by one and broadcasts to every subscriber', async () => {
    const bulk = await server.request('POST', '/v1/events/trigger/bulk', {
      body: { events: [{ name: 'welcome', to: 'ann', payload: { orderId: 'b-1' } }, { name: 'nope', to: 'ann' }] },
    });
    expect(bulk.status, bulk.text).toBe(201);
    expect(bulk.body.data[0]).toMatchObject({ acknowledged: true, status: 'processed' });
    expect(bulk.body.data[1]).toMatchObject({ acknowledged: false, status: 'error' });
    const broadcast = await server.request('POST', '/v1/events/trigger/broadcast', { body: { name: 'welcome', payload: { orderId: 'all' } } });
    expect(broadcast.status, broadcast.text).toBe(201);
    await server.waitForIdle();
    const subscribers = await server.request('GET', '/v2/subscribers?limit=100');
    const events = await eventsOf(server, broadcast.body.data.transactionId);
    expect(events.length).toBe(subscribers.body.data.length);
  });
});

describe('inbox', () => {
  it('serves the feed with read/seen filters and the unseen count', async () => {
    const response = await trigger(server, { name: 'welcome', to: 'inbox-user', payload: { orderId: 'i-1' } });
    // Delivered one after the other: triggers processed concurrently may create their messages in either order.
    await server.waitForIdle();
    await trigger(server, { name: 'welcome', to: 'inbox-user', payload: { orderId: 'i-2' } });
    expect(response.status).toBe(201);
    await server.waitForIdle();
    const feed = await server.request('GET', '/v1/subscribers/inbox-user/notifications/feed?limit=1');
    expect(feed.status, feed.text).toBe(200);
    expect(feed.body).toMatchObject({ totalCount: 2, hasMore: true, pageSize: 1, page: 0 });
    expect(feed.body.data[0].content).toBe('Order i-2');
    const unseen = await server.request('GET', '/v1/subscribers/inbox-user/notifications/unseen');
    expect(unseen.body).toEqual({ data: { count: 2 } });

    const marked = await server.request('POST', '/v1/subscribers/inbox-user/messages/mark-as', { body: { messageId: feed.body.data[0]._id, markAs: 'seen' } });
    expect(marked.status, marked.text).toBe(201);
    expect((await server.request('GET', '/v1/subscribers/inbox-user/notifications/unseen')).body).toEqual({ data: { count: 1 } });
    const seenFeed = await server.request('GET', '/v1/subscribers/inbox-user/notifications/feed?seen=true');
    expect(seenFeed.body.data.map((message: any) => message.content)).toEqual(['Order i-2']);
    const unknown = await server.request('GET', '/v1/subscribers/nobody/notifications/feed');
    expect(unknown.status).toBe(404);
  });
});
