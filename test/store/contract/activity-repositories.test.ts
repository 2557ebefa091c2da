import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError } from '../../../src/domain/errors.js';
import { newId } from '../../../src/domain/ids.js';
import type { Subscriber } from '../../../src/domain/types.js';
import type { Store } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { buildMessage, buildNotificationEvent, insertNotificationEvent, insertSubscriber, type Scope } from '../../helpers/factories.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/**
 * The subscriber, message, notification and job repositories: one contract run on SQLite and on
 * PostgreSQL, since their SQL leans on features whose syntax differs easily (partial-index upserts,
 * bitwise filters, LIKE ... ESCAPE, string concatenation, COUNT types).
 */
const implementations: Array<{ name: string; available: boolean; open: () => Promise<TestSqlDatabase> }> = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`activity repositories on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: Store;
    const scope: Scope = { environmentId: newId(), organizationId: newId() };
    const otherScope: Scope = { environmentId: newId(), organizationId: scope.organizationId };

    beforeAll(async () => {
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
    });
    afterAll(async () => {
      await database?.close();
    });

    describe('subscribers', () => {
      it('creates, refuses a duplicate subscriberId, frees it on delete, and drops topic subscriptions', async () => {
        const first = await insertSubscriber(store, scope, { subscriberId: 'dup', data: { a: 1 }, isOnline: true });
        expect(await store.subscribers.findBySubscriberId(scope.environmentId, 'dup')).toEqual(first);
        expect(await store.subscribers.get(scope.environmentId, first._id)).toEqual(first);
        await expect(insertSubscriber(store, scope, { subscriberId: 'dup' })).rejects.toBeInstanceOf(ConflictError);
        const elsewhere = await insertSubscriber(store, otherScope, { subscriberId: 'dup' });
        expect(await store.subscribers.get(scope.environmentId, elsewhere._id)).toBeUndefined();

        const at = new Date().toISOString();
        await store.topics.create({ _id: newId(), _environmentId: scope.environmentId, _organizationId: scope.organizationId, key: 't-dup', createdAt: at, updatedAt: at });
        const topic = (await store.topics.getByKey(scope.environmentId, 't-dup'))!;
        await store.topics.addSubscriptions([{ _id: newId(), _environmentId: scope.environmentId, _topicId: topic._id, topicKey: 't-dup', _subscriberId: first._id, subscriberId: 'dup', createdAt: at }]);

        expect(await store.subscribers.delete(scope.environmentId, first._id, at)).toBe(true);
        expect(await store.subscribers.delete(scope.environmentId, first._id, at)).toBe(false);
        expect(await store.subscribers.findBySubscriberId(scope.environmentId, 'dup')).toBeUndefined();
        expect(await store.topics.listSubscriptions(scope.environmentId, topic._id, { limit: 10 })).toEqual([]);
        const [deleted] = await store.subscribers.getMany(scope.environmentId, [first._id]);
        expect(deleted).toMatchObject({ deleted: true, __v: first.__v + 1 });
        const again = await insertSubscriber(store, scope, { subscriberId: 'dup' });
        expect(again._id).not.toBe(first._id);
      });

      it('saves every field and lists with filters, totalCount and order', async () => {
        const listScope: Scope = { environmentId: newId(), organizationId: scope.organizationId };
        const t = (s: number) => new Date(Date.UTC(2026, 1, 1, 0, 0, s)).toISOString();
        const a = await insertSubscriber(store, listScope, { subscriberId: 'a', firstName: 'Ada', lastName: 'Love_lace', email: 'Ada@X.io', createdAt: t(1) });
        const b = await insertSubscriber(store, listScope, { subscriberId: 'b', firstName: 'Grace', lastName: null, email: 'g@x.io', createdAt: t(2) });
        const c = await insertSubscriber(store, listScope, { subscriberId: 'c', firstName: null, lastName: 'Hopper%', email: null, createdAt: t(2) });
        const list = async (filter: object) =>
          (await store.subscribers.list(listScope.environmentId, { page: 0, limit: 10, ...filter })).data.map((s) => s.subscriberId);
        // b and c share a createdAt: the later id (c, created after b) comes first.
        expect(await list({})).toEqual(['c', 'b', 'a']);
        expect(await list({ email: 'ada@x.io' })).toEqual(['a']);
        expect(await list({ name: 'e_l' })).toEqual(['a']);
        expect(await list({ name: '_' })).toEqual(['a']);
        expect(await list({ name: '%' })).toEqual(['c']);
        expect(await list({ name: 'ada love' })).toEqual(['a']);
        expect(await list({ subscriberId: 'b' })).toEqual(['b']);
        const page = await store.subscribers.list(listScope.environmentId, { page: 1, limit: 2 });
        expect(page).toMatchObject({ page: 1, pageSize: 2, hasMore: false, totalCount: 3 });
        expect(page.data.map((s) => s._id)).toEqual([a._id]);

        const changed: Subscriber = { ...b, firstName: null, locale: 'de', data: { x: [1] }, isOnline: false, lastOnlineAt: t(9), __v: 4, channels: [{ providerId: 'slack', _integrationId: newId(), credentials: { webhookUrl: 'https://h' } }], updatedAt: t(9) };
        await store.subscribers.save(changed);
        expect(await store.subscribers.get(listScope.environmentId, b._id)).toEqual(changed);
        expect((await store.subscribers.findManyBySubscriberIds(listScope.environmentId, ['a', 'c', 'zz'])).map((s) => s._id).sort()).toEqual([a._id, c._id].sort());
        const ids = await store.subscribers.listIds(listScope.environmentId, undefined, 2);
        const rest = await store.subscribers.listIds(listScope.environmentId, ids[1]._id, 2);
        expect([...ids, ...rest].map((s) => s._id)).toEqual([a._id, b._id, c._id].sort());
      });
    });

    describe('messages', () => {
      it('creates once per job, in bulk too, and reads back every field', async () => {
        const subscriber = await insertSubscriber(store, scope);
        const message = buildMessage(subscriber, { channel: 'email', contextKeys: ['b:2', 'a:1'] });
        expect(await store.messages.create(message)).toEqual({ message, created: true });
        const stored = await store.messages.get(scope.environmentId, message._id);
        expect(stored).toEqual({ ...message, deleted: false });
        const rerun = await store.messages.create({ ...message, _id: newId() });
        expect(rerun.created).toBe(false);
        expect(rerun.message._id).toBe(message._id);
        // The subscriber's counter (its totalCount) counts the message once: the skipped rerun changed no counter.
        expect(await store.messages.list(scope.environmentId, { subscriberId: subscriber.subscriberId, page: 0, limit: 5 })).toMatchObject({ totalCount: 1 });

        const bulk = [buildMessage(subscriber), buildMessage(subscriber), { ...buildMessage(subscriber), _jobId: message._jobId }];
        await store.transaction((tx) => tx.messages.createMany(bulk));
        expect(await store.messages.get(scope.environmentId, bulk[0]._id)).toBeDefined();
        expect(await store.messages.get(scope.environmentId, bulk[2]._id)).toBeUndefined();
        const page = await store.messages.list(scope.environmentId, { subscriberId: subscriber.subscriberId, contextKeys: ['a:1', 'b:2'], page: 0, limit: 5 });
        expect(page).toMatchObject({ totalCount: 1, hasMore: false });
        expect(page.data[0]._id).toBe(message._id);
        expect(await store.messages.get(otherScope.environmentId, message._id)).toBeUndefined();
      });

      it('marks as read/seen/unread/unseen in the order given, and soft-deletes', async () => {
        const subscriber = await insertSubscriber(store, scope);
        const [m1, m2] = [buildMessage(subscriber), buildMessage(subscriber)];
        const email = buildMessage(subscriber, { channel: 'email' });
        await store.messages.createMany([m1, m2, email]);
        const found = await store.messages.findInAppForSubscriber(scope.environmentId, subscriber._id, [m1._id, m2._id, email._id, 'nope']);
        expect(found.map((m) => m._id).sort()).toEqual([m1._id, m2._id].sort());
        const at = '2026-05-05T05:05:05.005Z';
        const read = await store.messages.markAs(scope.environmentId, [m2._id, m1._id], 'read', at);
        expect(read.map((m) => [m._id, m.read, m.seen, m.lastReadDate, m.lastSeenDate])).toEqual([
          [m2._id, true, true, at, at],
          [m1._id, true, true, at, at],
        ]);
        await store.messages.markAs(scope.environmentId, [m1._id], 'unread', '2026-05-06T00:00:00.000Z');
        expect(await store.messages.get(scope.environmentId, m1._id)).toMatchObject({ read: false, seen: true, lastReadDate: at });
        await store.messages.markAs(scope.environmentId, [m1._id], 'unseen', '2026-05-06T00:00:00.000Z');
        expect(await store.messages.get(scope.environmentId, m1._id)).toMatchObject({ read: false, seen: false });
        expect(await store.messages.softDelete(otherScope.environmentId, m1._id, at)).toBe(false);
        expect(await store.messages.softDelete(scope.environmentId, m1._id, at)).toBe(true);
        expect(await store.messages.softDelete(scope.environmentId, m1._id, at)).toBe(false);
        expect(await store.messages.get(scope.environmentId, m1._id)).toBeUndefined();
        expect(await store.messages.findInAppForSubscriber(scope.environmentId, subscriber._id, [m1._id])).toEqual([]);
      });
    });

    describe('notifications and jobs', () => {
      it('stores an event with jobs and details, and reads it back whole', async () => {
        const subscriber = await insertSubscriber(store, scope, { email: 'n@example.com' });
        const event = await insertNotificationEvent(store, subscriber, { channels: ['digest', 'email'], severity: 'medium', contextKeys: ['t:1'] });
        const stored = await store.notifications.get(scope.environmentId, event._id);
        const { jobs, ...rest } = event;
        expect(stored).toMatchObject(rest);
        expect(stored!.jobs).toEqual(jobs);
        expect(await store.notifications.get(otherScope.environmentId, event._id)).toBeUndefined();
        expect(await store.jobs.listForNotification(scope.environmentId, event._id)).toEqual(jobs);

        const job = jobs[1];
        const bounced = { _id: newId(), createdAt: '2030-01-01T00:00:00.000Z', status: 'Failed', detail: 'bounced', isRetry: true, isTest: false, source: 'Webhook', raw: null } as const;
        await store.jobs.save({ ...job, status: 'failed', providerId: 'ses', updatedAt: '2030-01-01T00:00:00.000Z', executionDetails: [] }, bounced);
        const reread = await store.jobs.get(scope.environmentId, job._id);
        expect(reread).toMatchObject({ status: 'failed', providerId: 'ses', updatedAt: '2030-01-01T00:00:00.000Z' });
        expect(reread!.executionDetails.map((d) => d.status)).toEqual(['Pending', 'Success', 'Failed']);
        expect(await store.jobs.get(otherScope.environmentId, job._id)).toBeUndefined();

        await store.notifications.save({ ...rest, channels: ['push'], _digestedNotificationId: event._id, updatedAt: '2030-01-01T00:00:00.000Z' });
        expect(await store.notifications.get(scope.environmentId, event._id)).toMatchObject({ channels: ['push'], _digestedNotificationId: event._id });
        const byChannel = await store.notifications.list(scope.environmentId, { channels: ['push'], page: 0, limit: 10 });
        expect(byChannel.data.map((e) => e._id)).toEqual([event._id]);
        expect((await store.notifications.list(scope.environmentId, { channels: ['digest'], page: 0, limit: 10, transactionId: event.transactionId })).data).toEqual([]);
      });

      it('stores an event with its jobs in one call, all or nothing', async () => {
        const subscriber = await insertSubscriber(store, scope);
        const at = new Date().toISOString();
        await store.topics.create({ _id: newId(), _environmentId: scope.environmentId, _organizationId: scope.organizationId, key: 't-with-jobs', createdAt: at, updatedAt: at });
        const topic = (await store.topics.getByKey(scope.environmentId, 't-with-jobs'))!;
        const built = buildNotificationEvent(subscriber, { channels: ['in_app', 'delay', 'email'], topics: [{ _topicId: topic._id, topicKey: topic.key }] });
        await store.notifications.createWithJobs(built.event, built.jobs);
        const stored = await store.notifications.get(scope.environmentId, built.event._id);
        const { jobs: _jobs, ...event } = built.event;
        expect(stored).toMatchObject(event);
        expect(stored!.jobs).toEqual(built.jobs);
        const byTopic = await store.notifications.list(scope.environmentId, { topicKey: 't-with-jobs', page: 0, limit: 10 });
        expect(byTopic.data.map((e) => e._id)).toEqual([built.event._id]);

        // A job id already taken: the statement fails and leaves neither the event nor any of its jobs behind.
        const failing = buildNotificationEvent(subscriber, { channels: ['in_app', 'email'] });
        const jobs = [failing.jobs[0], { ...failing.jobs[1], _id: built.jobs[0]._id }];
        await expect(store.notifications.createWithJobs(failing.event, jobs)).rejects.toThrow();
        expect(await store.notifications.get(scope.environmentId, failing.event._id)).toBeUndefined();
        expect(await store.jobs.get(scope.environmentId, failing.jobs[0]._id)).toBeUndefined();
        expect(await store.jobs.listForNotification(scope.environmentId, failing.event._id)).toEqual([]);

        // An event without jobs is a single insert.
        const bare = buildNotificationEvent(subscriber, { channels: [] });
        await store.notifications.createWithJobs(bare.event, []);
        expect(await store.notifications.get(scope.environmentId, bare.event._id)).toMatchObject({ _id: bare.event._id, jobs: [] });
      });

      it('saves a job and its new execution detail both or neither', async () => {
        const subscriber = await insertSubscriber(store, scope);
        const event = await insertNotificationEvent(store, subscriber, { channels: ['in_app'] });
        const [job] = event.jobs;
        const [pending] = job.executionDetails;
        // The detail's id is taken (the job's own Pending detail): the status change must not be kept either.
        expect(job.status).toBe('completed');
        await expect(store.jobs.save({ ...job, status: 'failed' }, { ...pending, detail: 'again' })).rejects.toThrow();
        expect(await store.jobs.get(scope.environmentId, job._id)).toMatchObject({ status: 'completed' });
        const done = { ...pending, _id: newId(), createdAt: '2030-01-01T00:00:00.000Z', status: 'Failed', detail: 'done' } as const;
        await store.jobs.save({ ...job, status: 'failed' }, done);
        const saved = await store.jobs.get(scope.environmentId, job._id);
        expect(saved).toMatchObject({ status: 'failed' });
        expect(saved!.executionDetails.map((d) => d.detail)).toEqual([...job.executionDetails.map((d) => d.detail), 'done']);
      });

      it("counts a channel step's final status once: concurrent saves and reruns add nothing, and their other changes are kept", async () => {
        const countScope: Scope = { environmentId: newId(), organizationId: scope.organizationId };
        const subscriber = await insertSubscriber(store, countScope);
        const event = await insertNotificationEvent(store, subscriber, { channels: ['in_app'] });
        const [job] = event.jobs;
        await store.jobs.save({ ...job, status: 'running', executionDetails: [] });
        const endedAt = '2031-02-03T04:05:06.007Z';
        const final = { ...job, status: 'completed' as const, providerId: 'novu', _templateId: 'wf-count', createdAt: '2031-02-03T04:05:05.000Z', updatedAt: endedAt, executionDetails: [] };
        const detail = (text: string) => ({ ...job.executionDetails[0], _id: newId(), createdAt: endedAt, status: 'Success', detail: text }) as const;
        // Four saves of the same final status at once (a job run twice by two workers, say): one moves the status.
        await Promise.all(['a', 'b', 'c', 'd'].map((text) => store.jobs.save(final, detail(text))));
        // A rerun in the same final status, with other changes: written, not counted.
        await store.jobs.save({ ...final, providerId: 'novu-rerun' }, detail('rerun'));
        const saved = await store.jobs.get(countScope.environmentId, job._id);
        expect(saved).toMatchObject({ status: 'completed', providerId: 'novu-rerun' });
        expect(saved!.executionDetails.map((d) => d.detail).filter((text) => text.length === 1 || text === 'rerun').sort()).toEqual(['a', 'b', 'c', 'd', 'rerun']);
        const rows = await store.overview.read(countScope.environmentId, { fromHour: '2031-02-03T00', toHour: '2031-02-04T00', bucket: 'hour' });
        expect(rows.totals).toEqual([{ channel: 'in_app', providerId: 'novu', workflowId: 'wf-count', outcome: 'sent', count: 1 }]);
        expect(rows.latency.reduce((sum, row) => sum + row.count, 0)).toBe(1);
        // Moving to another final status counts again (a failed step retried to success is another outcome).
        await store.jobs.save({ ...final, status: 'failed', providerId: 'novu' });
        const after = await store.overview.read(countScope.environmentId, { fromHour: '2031-02-03T00', toHour: '2031-02-04T00', bucket: 'hour' });
        expect(after.totals.map((row) => [row.outcome, row.count]).sort()).toEqual([['failed', 1], ['sent', 1]]);
      });

      it('leaves null profile fields out of the event subscriber', async () => {
        const subscriber = await insertSubscriber(store, scope, { firstName: null, phone: null });
        const built = buildNotificationEvent(subscriber);
        await store.notifications.createWithJobs({ ...built.event, subscriber: { ...built.event.subscriber!, firstName: null, phone: null } as never }, []);
        const stored = await store.notifications.get(scope.environmentId, built.event._id);
        expect(stored!.subscriber).toEqual({ subscriberId: subscriber.subscriberId, _id: subscriber._id, lastName: 'Lovelace', email: subscriber.email });
      });

      it('filters by topic, subscription, search, email and time bounds', async () => {
        const listScope: Scope = { environmentId: newId(), organizationId: scope.organizationId };
        const ada = await insertSubscriber(store, listScope, { subscriberId: 'ada_1', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' });
        const bob = await insertSubscriber(store, listScope, { subscriberId: 'bob', firstName: 'Bob', lastName: null, email: null });
        const at = new Date().toISOString();
        await store.topics.create({ _id: newId(), _environmentId: listScope.environmentId, _organizationId: listScope.organizationId, key: 'news', createdAt: at, updatedAt: at });
        const topic = (await store.topics.getByKey(listScope.environmentId, 'news'))!;
        const [subscription] = await store.topics.addSubscriptions([{ _id: newId(), _environmentId: listScope.environmentId, _topicId: topic._id, topicKey: 'news', _subscriberId: ada._id, subscriberId: 'ada_1', createdAt: at }]);
        const e1 = buildNotificationEvent(ada, { createdAt: '2026-01-01T00:00:01.000Z', topics: [{ _topicId: topic._id, topicKey: 'news' }] });
        const e2 = buildNotificationEvent(bob, { createdAt: '2026-01-01T00:00:02.000Z', subscriber: undefined });
        await store.transaction(async (tx) => {
          await tx.notifications.createMany([e1.event, e2.event]);
          await tx.jobs.createMany([...e1.jobs, ...e2.jobs]);
        });
        const ids = async (filter: object) => (await store.notifications.list(listScope.environmentId, { page: 0, limit: 10, ...filter })).data.map((e) => e._id);
        expect(await ids({})).toEqual([e2.event._id, e1.event._id]);
        expect(await ids({ topicKey: 'news' })).toEqual([e1.event._id]);
        expect(await ids({ subscriptionId: subscription._id })).toEqual([e1.event._id]);
        expect(await ids({ search: 'A_1' })).toEqual([e1.event._id]);
        expect(await ids({ search: '_' })).toEqual([e1.event._id]);
        expect(await ids({ search: 'bob' })).toEqual([e2.event._id]);
        expect(await ids({ search: 'ada love' })).toEqual([e1.event._id]);
        expect(await ids({ emails: ['ada@example.com'] })).toEqual([e1.event._id]);
        expect(await ids({ subscriberIds: ['bob'] })).toEqual([e2.event._id]);
        expect(await ids({ after: '2026-01-01T00:00:01.000Z' })).toEqual([e2.event._id]);
        expect(await ids({ before: '2026-01-01T00:00:02.000Z' })).toEqual([e1.event._id]);
        const page = await store.notifications.list(listScope.environmentId, { page: 0, limit: 1 });
        expect(page).toMatchObject({ hasMore: true, pageSize: 1 });
        expect(page.data[0].jobs!.map((j) => j._id)).toEqual(e2.jobs.map((j) => j._id));
      });
    });
  });
}
