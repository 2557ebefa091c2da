import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxEvent } from '../../src/realtime/ports.js';
import { scaleoutModeRequested } from '../helpers/databases.js';
import { insertMessage } from '../helpers/factories.js';
import { recordRealtime } from '../helpers/realtime-recorder.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The Inbox's read answers are kept in embedded mode (http/inbox-read-cache.ts). Every write that changes what they
 * show must make them stale at once: through the Inbox, the server-side API, the worker, and the subscriber's own
 * record. Each case primes the list and the count, writes, and reads again over real HTTP. In scale-out nothing is kept,
 * and the same reads hold.
 */
describe('Inbox read answers after each kind of write', () => {
  let server: TestServer;
  let identifier: string;
  const events: InboxEvent[] = [];
  const LIST = '/v1/inbox/notifications?limit=10&archived=false';
  const COUNT = `/v1/inbox/notifications/count?filters=${encodeURIComponent(JSON.stringify([{ read: false, archived: false }]))}`;

  const session = async (subscriberId: string, profile: Record<string, unknown> = {}) => {
    const response = await server.request('POST', '/v1/inbox/session', {
      key: null,
      body: { applicationIdentifier: identifier, subscriber: { subscriberId, ...profile } },
    });
    expect(response.status).toBe(201);
    return response.body.data.token as string;
  };
  const list = async (token: string) => {
    const response = await server.request('GET', LIST, { bearer: token });
    expect(response.status).toBe(200);
    return response.body as { data: Array<{ id: string; isRead: boolean; subject?: string; to: { firstName?: string } }> };
  };
  const unread = async (token: string) => {
    const response = await server.request('GET', COUNT, { bearer: token });
    expect(response.status).toBe(200);
    return response.body.data[0].count as number;
  };
  const trigger = async (to: unknown, n: number) => {
    expect((await server.request('POST', '/v1/events/trigger', { body: { name: 'cache-alert', to, payload: { n } } })).status).toBe(201);
    await server.waitForIdle();
  };
  const recordOf = async (subscriberId: string) => (await server.deps.store.subscribers.findBySubscriberId(server.devEnvironmentId, subscriberId))!;

  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    identifier = (await server.request('GET', '/v1/environments/me')).body.data.identifier;
    recordRealtime(server, events);
    const workflow = await server.request('POST', '/v2/workflows', {
      body: { workflowId: 'cache-alert', name: 'Cache alert', steps: [{ name: 'Inbox', type: 'in_app', controlValues: { subject: 'Alert {{ payload.n }}', body: 'b' } }] },
    });
    expect(workflow.status).toBe(201);
    const emailOnly = await server.request('POST', '/v2/workflows', {
      body: { workflowId: 'cache-email-only', name: 'Cache email only', steps: [{ name: 'Email', type: 'email', controlValues: { subject: 's', body: 'b' } }] },
    });
    expect(emailOnly.status).toBe(201);
  });
  afterAll(async () => server?.close());

  it('keeps answers in embedded mode only: a write that announces nothing is not seen until something is announced', async () => {
    const token = await session('quiet-writer');
    await trigger('quiet-writer', 1);
    const before = await list(token);
    expect(before.data).toHaveLength(1);
    // Straight into the store, bypassing every use case: no announcement.
    await insertMessage(server.deps.store, await recordOf('quiet-writer'), { subject: 'unannounced' });
    const after = await list(token);
    if (scaleoutModeRequested()) {
      expect(after.data).toHaveLength(2);
      return;
    }
    expect(after).toEqual(before);
    server.deps.realtime.messagesChanged({ environmentId: server.devEnvironmentId, subscriberRecordId: (await recordOf('quiet-writer'))._id });
    expect((await list(token)).data).toHaveLength(2);
  });

  it('a trigger delivered by the worker shows in the list and the count', async () => {
    const token = await session('fresh-trigger');
    expect((await list(token)).data).toHaveLength(0);
    expect(await unread(token)).toBe(0);
    await trigger('fresh-trigger', 1);
    expect((await list(token)).data.map((n) => n.subject)).toEqual(['Alert 1']);
    expect(await unread(token)).toBe(1);
  });

  it('an Inbox action and a bulk action show at once', async () => {
    const token = await session('fresh-actions');
    await trigger('fresh-actions', 1);
    await trigger('fresh-actions', 2);
    const [newest] = (await list(token)).data;
    expect(await unread(token)).toBe(2);
    expect((await server.request('PATCH', `/v1/inbox/notifications/${newest.id}/read`, { bearer: token })).status).toBe(200);
    expect((await list(token)).data.find((n) => n.id === newest.id)?.isRead).toBe(true);
    expect(await unread(token)).toBe(1);
    // read-archive archives the read ones; archive, all of them.
    expect((await server.request('POST', '/v1/inbox/notifications/read-archive', { bearer: token, body: {} })).status).toBe(204);
    expect((await list(token)).data.map((n) => n.id)).not.toContain(newest.id);
    expect((await list(token)).data).toHaveLength(1);
    expect((await server.request('POST', '/v1/inbox/notifications/archive', { bearer: token, body: {} })).status).toBe(204);
    expect((await list(token)).data).toHaveLength(0);
    expect(await unread(token)).toBe(0);
  });

  it('the server-side mark-as and delete show at once', async () => {
    const token = await session('fresh-server-side');
    await trigger('fresh-server-side', 1);
    const [message] = (await list(token)).data;
    expect(await unread(token)).toBe(1);
    const marked = await server.request('POST', '/v1/subscribers/fresh-server-side/messages/mark-as', { body: { messageId: message.id, markAs: 'read' } });
    expect(marked.status).toBe(201);
    expect((await list(token)).data[0].isRead).toBe(true);
    expect(await unread(token)).toBe(0);
    expect((await server.request('DELETE', `/v1/messages/${message.id}`)).status).toBe(200);
    expect((await list(token)).data).toHaveLength(0);
  });

  it('the v2 server-side notification routes (one action, a bulk action, a delete) show at once', async () => {
    const token = await session('fresh-v2');
    await trigger('fresh-v2', 1);
    await trigger('fresh-v2', 2);
    const [newest, older] = (await list(token)).data;
    expect(await unread(token)).toBe(2);
    expect((await server.request('PATCH', `/v2/subscribers/fresh-v2/notifications/${newest.id}/read`)).status).toBe(200);
    expect((await list(token)).data.map((n) => n.isRead)).toEqual([true, false]);
    expect(await unread(token)).toBe(1);
    expect((await server.request('POST', '/v2/subscribers/fresh-v2/notifications/read', { body: {} })).status).toBe(204);
    expect(await unread(token)).toBe(0);
    expect((await server.request('DELETE', `/v2/subscribers/fresh-v2/notifications/${older.id}`)).status).toBe(204);
    expect((await list(token)).data.map((n) => n.id)).toEqual([newest.id]);
  });

  it("the subscriber's profile, changed through the v2 PATCH, the v1 PUT, the session and a trigger, shows at once", async () => {
    const token = await session('fresh-profile', { firstName: 'Ada' });
    await trigger('fresh-profile', 1);
    expect((await list(token)).data[0].to.firstName).toBe('Ada');

    expect((await server.request('PATCH', '/v2/subscribers/fresh-profile', { body: { firstName: 'Grace' } })).status).toBe(200);
    expect((await list(token)).data[0].to.firstName).toBe('Grace');

    expect((await server.request('PUT', '/v1/subscribers/fresh-profile', { body: { firstName: 'Hedy' } })).status).toBe(200);
    expect((await list(token)).data[0].to.firstName).toBe('Hedy');

    await session('fresh-profile', { firstName: 'Katherine' });
    expect((await list(token)).data[0].to.firstName).toBe('Katherine');

    // A trigger's subscriber definition updates the profile, here of a workflow with no in-app step (no message
    // announces anything): the Inbox's message shows the new name.
    const emailOnly = { name: 'cache-email-only', to: { subscriberId: 'fresh-profile', firstName: 'Margaret' }, payload: {} };
    expect((await server.request('POST', '/v1/events/trigger', { body: emailOnly })).status).toBe(201);
    await server.waitForIdle();
    expect((await list(token)).data.map((n) => n.to.firstName)).toEqual(['Margaret']);
  });

  it("deleting the subscriber announces it, so its Inbox's kept answers go", async () => {
    const token = await session('fresh-deleted');
    await trigger('fresh-deleted', 1);
    await list(token);
    const record = await recordOf('fresh-deleted');
    expect((await server.request('DELETE', '/v2/subscribers/fresh-deleted')).status).toBe(200);
    expect(events).toContainEqual({ kind: 'subscriber-changed', audience: { environmentId: server.devEnvironmentId, subscriberRecordId: record._id } });
  });
});
