import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu } from '@novu/api';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The compatibility promise: the official `@novu/api` SDK, unchanged, against Herald. The SDK validates
 * every response with its own zod schemas, so a wrong envelope, a missing required field or an
 * out-of-range enum fails here even when our own tests pass.
 */
let server: TestServer;
let novu: Novu;

beforeAll(async () => {
  server = await startTestServer({ worker: true });
  novu = new Novu({ secretKey: server.devKey, serverURL: server.url, retryConfig: { strategy: 'none' } });
});
afterAll(async () => {
  await server?.close();
});

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('@novu/api SDK against Herald', () => {
  it('manages integrations: create, list, update, set primary, delete', async () => {
    const created = await novu.integrations.create({
      providerId: 'sendgrid',
      channel: 'email',
      name: 'SendGrid',
      identifier: 'sdk-sendgrid',
      credentials: { apiKey: 'SG.secret-value', from: 'noreply@example.com' },
      active: true,
      check: false,
    });
    expect(created.result).toMatchObject({ providerId: 'sendgrid', channel: 'email', identifier: 'sdk-sendgrid', active: true });
    expect(created.result.credentials).toBeUndefined();
    const id = created.result.id!;

    const listed = await novu.integrations.list();
    expect(listed.result.map((i) => i.id)).toContain(id);
    const active = await novu.integrations.listActive();
    expect(active.result.map((i) => i.id)).toContain(id);

    const updated = await novu.integrations.update({ name: 'SendGrid (main)', check: false }, id);
    expect(updated.result.name).toBe('SendGrid (main)');

    const primary = await novu.integrations.setAsPrimary(id);
    expect(primary.result.primary).toBe(true);

    const remaining = await novu.integrations.delete(id);
    expect(remaining.result.map((i) => i.id)).not.toContain(id);
  });

  it('manages subscribers: create, patch, online flag, retrieve, search, delete', async () => {
    const created = await novu.subscribers.create({ subscriberId: 'sdk-user', email: 'ada@example.com', firstName: 'Ada' });
    expect(created.result).toMatchObject({ subscriberId: 'sdk-user', email: 'ada@example.com', firstName: 'Ada' });

    const patched = await novu.subscribers.patch({ lastName: 'Lovelace', timezone: 'Europe/London' }, 'sdk-user');
    expect(patched.result).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace', timezone: 'Europe/London' });

    const offline = await novu.subscribers.properties.updateOnlineFlag({ isOnline: false }, 'sdk-user');
    expect(offline.result.isOnline).toBe(false);
    expect(offline.result.lastOnlineAt).toEqual(expect.any(String));

    const fetched = await novu.subscribers.retrieve('sdk-user');
    expect(fetched.result.lastName).toBe('Lovelace');

    const found = await novu.subscribers.search({ email: 'ada@example.com' });
    expect(found.result.data.map((s) => s.subscriberId)).toContain('sdk-user');

    await novu.subscribers.create({ subscriberId: 'sdk-temp' });
    await novu.subscribers.delete('sdk-temp');
    await expect(novu.subscribers.retrieve('sdk-temp')).rejects.toMatchObject({ statusCode: 404 });
  });

  it('runs a workflow end to end: trigger, messages, mark-as, events, feed, delete message', async () => {
    await novu.integrations.create({ providerId: 'novu', channel: 'in_app', active: true, check: false });
    await novu.subscribers.create({ subscriberId: 'sdk-reader', firstName: 'Grace' });
    await novu.workflows.create({
      workflowId: 'sdk-welcome',
      name: 'Welcome',
      active: true,
      steps: [{ name: 'Inbox', type: 'in_app', controlValues: { subject: 'Hi', body: 'Hello {{subscriber.firstName}}' } }],
    });

    const triggered = await novu.trigger({ workflowId: 'sdk-welcome', to: 'sdk-reader', payload: { plan: 'pro' }, context: { tenant: 'acme' } });
    expect(triggered.result).toMatchObject({ acknowledged: true, status: 'processed' });
    const transactionId = triggered.result.transactionId!;

    const message = await eventually(async () => {
      const page = await novu.messages.retrieve({ subscriberId: 'sdk-reader', channel: 'in_app' });
      return page.result.data[0];
    });
    expect(message).toMatchObject({ channel: 'in_app', transactionId, read: false, seen: false, content: 'Hello Grace' });

    const marked = await novu.subscribers.messages.markAllAs({ messageId: message.id!, markAs: 'read' }, 'sdk-reader');
    expect(marked.result[0]).toMatchObject({ read: true, seen: true });

    const events = await novu.notifications.list({ subscriberIds: ['sdk-reader'], contextKeys: ['tenant:acme'] });
    expect(events.result.data).toHaveLength(1);
    const event = await novu.notifications.retrieve(events.result.data[0].id!);
    expect(event.result.transactionId).toBe(transactionId);
    expect(event.result.jobs?.[0]?.status).toBe('completed');

    const feed = await novu.subscribers.notifications.feed({ subscriberId: 'sdk-reader' });
    expect(feed.result.data.length).toBeGreaterThan(0);
    const unseen = await novu.subscribers.notifications.unseenCount({ subscriberId: 'sdk-reader' });
    expect(unseen.result.count).toBe(0);

    const deleted = await novu.messages.delete(message.id!);
    expect(deleted.result).toMatchObject({ acknowledged: true, status: 'deleted' });
    const after = await novu.messages.retrieve({ subscriberId: 'sdk-reader' });
    expect(after.result.data.map((m) => m.id)).not.toContain(message.id);
  });

  it('manages topics and their subscriptions', async () => {
    await novu.subscribers.create({ subscriberId: 'sdk-topic-member' });
    const topic = await novu.topics.create({ key: 'sdk-topic', name: 'SDK topic' });
    expect(topic.result.key).toBe('sdk-topic');
    await novu.topics.subscriptions.create({ subscriberIds: ['sdk-topic-member'] }, 'sdk-topic');
    const subscriptions = await novu.topics.subscriptions.list({ topicKey: 'sdk-topic' });
    expect(subscriptions.result.data.map((s) => s.subscriber?.subscriberId)).toContain('sdk-topic-member');
  });

  it('surfaces errors as the SDK expects', async () => {
    await expect(novu.subscribers.retrieve('nobody-here')).rejects.toMatchObject({ statusCode: 404 });
    const wrongKey = new Novu({ secretKey: 'not-a-key', serverURL: server.url, retryConfig: { strategy: 'none' } });
    await expect(wrongKey.integrations.list()).rejects.toMatchObject({ statusCode: 401 });
  });
});
