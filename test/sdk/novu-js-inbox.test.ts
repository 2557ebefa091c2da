import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Novu, SeverityLevelEnum } from '@novu/js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The real @novu/js 3.19.2 client (what <Inbox /> runs on) against a real Herald over HTTP: the session, the list
 * with paging, counts, every notification action, and preferences read and written. Results are also read back
 * through the server-side API, so a client that silently ignored an error could not pass.
 */
describe('@novu/js against Herald', () => {
  let server: TestServer;
  let novu: Novu;
  let workflowId: string;

  const serverMessages = async () => {
    const response = await server.request('GET', '/v1/messages?subscriberId=js-user&channel=in_app&limit=100');
    return response.body.data as Array<{ _id: string; read: boolean; seen: boolean; archived: boolean; snoozedUntil?: string; cta: { action?: { status?: string } } }>;
  };
  const stored = async (id: string) => (await serverMessages()).find((m) => m._id === id);

  beforeAll(async () => {
    server = await startTestServer({ worker: true });
    const created = await server.request('POST', '/v2/workflows', {
      body: {
        workflowId: 'js-alert',
        name: 'JS alert',
        tags: ['alerts'],
        severity: 'high',
        steps: [
          { name: 'Inbox', type: 'in_app', controlValues: { subject: 'Alert {{ payload.n }}', body: 'Body {{ payload.n }}', primaryAction: { label: 'Ack' }, secondaryAction: { label: 'Later' } } },
          { name: 'Mail', type: 'email', controlValues: { subject: 'Alert', body: 'Alert' } },
        ],
      },
    });
    expect(created.status).toBe(201);
    workflowId = created.body.data._id;
    // One at a time: workers run concurrent triggers in any order, and the list is newest message first, so the
    // expected order below holds only if each message is stored before the next trigger.
    for (let n = 1; n <= 12; n++) {
      expect((await server.request('POST', '/v1/events/trigger', { body: { name: 'js-alert', to: { subscriberId: 'js-user', firstName: 'Js' }, payload: { n } } })).status).toBe(201);
      await server.waitForIdle();
    }
    const identifier = (await server.request('GET', '/v1/environments/me')).body.data.identifier;
    novu = new Novu({ applicationIdentifier: identifier, subscriber: 'js-user', apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists with paging (limit + after cursor) and counts', async () => {
    const first = await novu.notifications.list({ limit: 5 });
    expect(first.error).toBeUndefined();
    expect(first.data!.notifications.map((n) => n.subject)).toEqual(['Alert 12', 'Alert 11', 'Alert 10', 'Alert 9', 'Alert 8']);
    expect(first.data!.hasMore).toBe(true);
    const notification = first.data!.notifications[0];
    expect(notification).toMatchObject({ body: 'Body 12', isRead: false, isArchived: false, tags: ['alerts'], severity: 'high', channelType: 'in_app' });
    expect(notification.primaryAction).toMatchObject({ label: 'Ack', isCompleted: false });
    expect(notification.workflow).toMatchObject({ identifier: 'js-alert', name: 'JS alert' });

    // The client pages with the id of the last notification it holds; its cache appends each page to the list.
    const subjects = (n: number) => Array.from({ length: n }, (_, i) => `Alert ${12 - i}`);
    const second = await novu.notifications.list({ limit: 5, after: first.data!.notifications[4].id });
    expect(second.data!.notifications.map((n) => n.subject)).toEqual(subjects(10));
    expect(second.data!.hasMore).toBe(true);
    const third = await novu.notifications.list({ limit: 5, after: second.data!.notifications[9].id });
    expect(third.data!.notifications.map((n) => n.subject)).toEqual(subjects(12));
    expect(third.data!.hasMore).toBe(false);

    const counts = await novu.notifications.count({ filters: [{ read: false }, { tags: ['alerts'], severity: SeverityLevelEnum.HIGH }, { tags: ['nope'] }] });
    expect(counts.error).toBeUndefined();
    expect(counts.data!.counts.map((c) => c.count)).toEqual([12, 12, 0]);
    const single = await novu.notifications.count({ read: false, archived: false });
    expect(single.data!.count).toBe(12);
  });

  it('runs every notification action, each read back through GET /v1/messages', async () => {
    const { data } = await novu.notifications.list({ limit: 12 });
    const [a, b, c, d] = data!.notifications;

    expect((await a.read()).data).toMatchObject({ isRead: true, isSeen: true });
    expect(await stored(a.id)).toMatchObject({ read: true, seen: true });
    expect((await novu.notifications.unread({ notificationId: a.id })).data).toMatchObject({ isRead: false });
    expect(await stored(a.id)).toMatchObject({ read: false });
    expect((await b.seen()).data).toMatchObject({ isSeen: true });
    expect(await stored(b.id)).toMatchObject({ seen: true, read: false });

    expect((await b.archive()).data).toMatchObject({ isArchived: true });
    expect(await stored(b.id)).toMatchObject({ archived: true });
    expect((await novu.notifications.unarchive({ notificationId: b.id })).data).toMatchObject({ isArchived: false });
    expect(await stored(b.id)).toMatchObject({ archived: false });

    const until = new Date(Date.now() + 3600_000).toISOString();
    const snoozed = await novu.notifications.snooze({ notificationId: c.id, snoozeUntil: until });
    expect(snoozed.error).toBeUndefined();
    expect(snoozed.data).toMatchObject({ isSnoozed: true });
    expect((await stored(c.id))?.snoozedUntil).toBe(until);
    const snoozedList = await novu.notifications.list({ snoozed: true });
    expect(snoozedList.data!.notifications.map((n) => n.id)).toEqual([c.id]);
    expect((await novu.notifications.unsnooze({ notificationId: c.id })).data).toMatchObject({ isSnoozed: false });
    expect((await stored(c.id))?.snoozedUntil).toBeUndefined();

    expect((await novu.notifications.completePrimary({ notificationId: d.id })).data?.primaryAction).toMatchObject({ isCompleted: true });
    expect((await stored(d.id))?.cta.action?.status).toBe('done');
    expect((await novu.notifications.revertPrimary({ notificationId: d.id })).data?.primaryAction).toMatchObject({ isCompleted: false });
    expect((await novu.notifications.completeSecondary({ notificationId: d.id })).data?.secondaryAction).toMatchObject({ isCompleted: true });
    expect((await novu.notifications.revertSecondary({ notificationId: d.id })).data?.secondaryAction).toMatchObject({ isCompleted: false });
    expect((await stored(d.id))?.cta.action?.status).toBe('pending');

    expect((await novu.notifications.seenAll({ notificationIds: [d.id] })).error).toBeUndefined();
    expect(await stored(d.id)).toMatchObject({ seen: true });
    expect((await novu.notifications.readAll({ tags: ['alerts'] })).error).toBeUndefined();
    expect((await serverMessages()).every((m) => m.read)).toBe(true);
    expect((await novu.notifications.archiveAllRead()).error).toBeUndefined();
    expect((await serverMessages()).every((m) => m.archived)).toBe(true);
    expect((await novu.notifications.count({ read: false, archived: false })).data!.count).toBe(0);

    expect((await novu.notifications.delete({ notificationId: a.id })).error).toBeUndefined();
    expect(await stored(a.id)).toBeUndefined();
    expect((await novu.notifications.archiveAll()).error).toBeUndefined();
    expect((await novu.notifications.deleteAll({ tags: ['alerts'] })).error).toBeUndefined();
    expect(await serverMessages()).toEqual([]);
  });

  it('reads and writes preferences (global, per workflow, bulk, schedule)', async () => {
    const listed = await novu.preferences.list();
    expect(listed.error).toBeUndefined();
    const global = listed.data!.find((p) => p.level === 'global')!;
    expect(global.channels).toMatchObject({ in_app: true, email: true });
    const workflowPreference = listed.data!.find((p) => p.level === 'template')!;
    expect(workflowPreference.workflow).toMatchObject({ id: workflowId, identifier: 'js-alert', name: 'JS alert' });
    expect(workflowPreference.channels).toEqual({ in_app: true, email: true });

    const updated = await workflowPreference.update({ channels: { email: false } });
    expect(updated.error).toBeUndefined();
    expect(updated.data!.channels).toEqual({ in_app: true, email: false });
    const serverSide = await server.request('GET', '/v2/subscribers/js-user/preferences');
    expect(serverSide.status).toBe(200);
    expect(JSON.stringify(serverSide.body.data.workflows)).toContain('"email":false');

    const bulk = await novu.preferences.bulkUpdate([{ workflowId, channels: { in_app: false } }]);
    expect(bulk.error).toBeUndefined();
    expect(bulk.data![0].channels).toEqual({ in_app: false, email: false });

    const globalUpdate = await global.update({ channels: { email: true, in_app: true } });
    expect(globalUpdate.error).toBeUndefined();
    const again = await novu.preferences.list();
    expect(again.data!.find((p) => p.level === 'template')!.channels).toEqual({ in_app: true, email: true });

    const schedule = await novu.preferences.schedule.update({ isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] } } });
    expect(schedule.error).toBeUndefined();
    const read = await novu.preferences.schedule.get();
    expect(read.data).toMatchObject({ isEnabled: true, weeklySchedule: { monday: { isEnabled: true, hours: [{ start: '09:00 AM', end: '05:00 PM' }] } } });
  });
});
