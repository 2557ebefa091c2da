import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import type { Message, NotificationEvent, Subscriber } from '../../../src/domain/types.js';
import type { MessageListFilter, NotificationListFilter } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { EVENT_STATUSES, eventStatusOf } from '../../../src/domain/event-status.js';
import type { JobStatus, StepType } from '../../../src/domain/types.js';
import { buildMessage, buildNotificationEvent, insertNotificationEvents, insertSubscriber, type BuiltEvent, type Scope } from '../../helpers/factories.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/**
 * The message list's totalCount (message_counters, kept by every message write) and the event list's topicKey
 * page (driven from notification_topics), on SQLite and on PostgreSQL. Expected values are computed from the
 * test's own record of what it wrote, never from the store.
 */
const implementations: Array<{ name: string; available: boolean; open: () => Promise<TestSqlDatabase> }> = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

/** The job statuses of an event's steps, one event each: every branch of eventStatusOf. */
const STATUS_MIXES: JobStatus[][] = [
  ['failed'],
  ['completed', 'failed'],
  ['failed', 'queued'],
  ['canceled', 'failed'],
  ['pending'],
  ['completed', 'queued'],
  ['running'],
  ['delayed', 'canceled'],
  ['completed', 'pending', 'skipped'],
  ['completed'],
  ['completed', 'skipped'],
  ['merged'],
  ['canceled', 'completed'],
  ['canceled'],
  ['canceled', 'canceled'],
];

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`activity lists on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: SqlStore;
    const newScope = (): Scope => ({ environmentId: newId(), organizationId: newId() });

    beforeAll(async () => {
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
    });
    afterAll(async () => {
      await database?.close();
    });

    /** The messages a filter selects, from the test's own bookkeeping (id → message as last written). */
    function expectedCount(written: Map<string, Message>, subscribers: Subscriber[], filter: Partial<MessageListFilter>): number {
      const externalId = new Map(subscribers.map((s) => [s._id, s.subscriberId]));
      const contextSet = (keys: string[] | undefined) => [...new Set(keys ?? [])].sort().join('\n');
      return [...written.values()].filter(
        (m) =>
          !m.deleted &&
          (filter.channel === undefined || m.channel === filter.channel) &&
          (filter.subscriberId === undefined || externalId.get(m._subscriberId) === filter.subscriberId) &&
          (filter.contextKeys === undefined || contextSet(m.contextKeys) === contextSet(filter.contextKeys)) &&
          (filter.transactionIds === undefined || filter.transactionIds.includes(m.transactionId)),
      ).length;
    }

    const totalOf = async (scope: Scope, filter: Partial<MessageListFilter>) =>
      (await store.messages.list(scope.environmentId, { page: 0, limit: 1, ...filter })).totalCount;

    /** Every filter shape the list can count: each single scope, none, and combinations. */
    function filtersFor(subscribers: Subscriber[], written: Map<string, Message>): Array<Partial<MessageListFilter>> {
      const [a, b] = subscribers;
      const someTransaction = [...written.values()][0].transactionId;
      return [
        {},
        { channel: 'in_app' },
        { channel: 'email' },
        { channel: 'sms' },
        { channel: 'push' },
        { subscriberId: a.subscriberId },
        { subscriberId: b.subscriberId },
        { subscriberId: 'nobody' },
        { contextKeys: [] },
        { contextKeys: ['tenant:1'] },
        { contextKeys: ['region:eu', 'tenant:1'] },
        { channel: 'in_app', subscriberId: a.subscriberId },
        { channel: 'email', contextKeys: ['tenant:1'] },
        { subscriberId: b.subscriberId, contextKeys: [] },
        { transactionIds: [someTransaction] },
        { transactionIds: [someTransaction], channel: 'email' },
      ];
    }

    async function expectTotals(scope: Scope, subscribers: Subscriber[], written: Map<string, Message>): Promise<void> {
      for (const filter of filtersFor(subscribers, written)) {
        expect({ filter, total: await totalOf(scope, filter) }).toEqual({ filter, total: expectedCount(written, subscribers, filter) });
      }
    }

    describe('message totalCount', () => {
      it('counts creates once per job, in bulk too, and follows soft delete and save', async () => {
        const scope = newScope();
        const a = await insertSubscriber(store, scope, { subscriberId: 'count-a' });
        const b = await insertSubscriber(store, scope, { subscriberId: 'count-b' });
        const written = new Map<string, Message>();
        const remember = (message: Message) => written.set(message._id, message);

        const first = buildMessage(a, { channel: 'email', contextKeys: ['tenant:1'] });
        expect((await store.messages.create(first)).created).toBe(true);
        remember(first);
        for (const message of [buildMessage(a), buildMessage(b, { channel: 'sms', contextKeys: ['tenant:1', 'region:eu'] }), buildMessage(b, { subscriber: undefined })]) {
          await store.messages.create(message);
          remember(message);
        }
        await expectTotals(scope, [a, b], written);

        // A rerun of a job, alone or inside a bulk insert, adds nothing.
        expect((await store.messages.create({ ...first, _id: newId() })).created).toBe(false);
        const bulk = [buildMessage(a, { channel: 'push', contextKeys: ['tenant:1'] }), buildMessage(b), buildMessage(a, { channel: 'email' })];
        await store.messages.createMany([...bulk, { ...buildMessage(a), _jobId: first._jobId }]);
        bulk.forEach(remember);
        await store.transaction((tx) => tx.messages.createMany([buildMessage(b, { _jobId: bulk[1]._jobId })]));
        const inTransaction = buildMessage(b, { channel: 'email', contextKeys: ['tenant:1'] });
        await store.transaction((tx) => tx.messages.createMany([inTransaction]));
        remember(inTransaction);
        await expectTotals(scope, [a, b], written);

        // Soft delete subtracts only when it flips the flag.
        expect(await store.messages.softDelete(scope.environmentId, first._id, new Date().toISOString())).toBe(true);
        expect(await store.messages.softDelete(scope.environmentId, first._id, new Date().toISOString())).toBe(false);
        remember({ ...first, deleted: true });
        await expectTotals(scope, [a, b], written);

        // Mark-as changes no counted column; save may change every one of them.
        await store.messages.markAs(scope.environmentId, [bulk[0]._id, first._id], 'read', new Date().toISOString());
        await expectTotals(scope, [a, b], written);
        const moved: Message = { ...bulk[0], channel: 'sms', contextKeys: ['region:eu', 'tenant:1'] };
        await store.messages.save(moved);
        remember(moved);
        const hidden: Message = { ...bulk[1], deleted: true };
        await store.messages.save(hidden);
        remember(hidden);
        const restored: Message = { ...first, deleted: false, channel: 'in_app' };
        await store.messages.save(restored);
        remember(restored);
        await store.messages.save({ ...restored, status: 'error' });
        await expectTotals(scope, [a, b], written);
        expect(await totalOf(scope, {})).toBe(7);
      });

      it('stays exact under concurrent creates of new and already-created jobs', async () => {
        const scope = newScope();
        const subscribers = [await insertSubscriber(store, scope), await insertSubscriber(store, scope)];
        const written = new Map<string, Message>();
        const messages = Array.from({ length: 60 }, (_, i) =>
          buildMessage(subscribers[i % 2], { channel: (['in_app', 'email', 'sms'] as const)[i % 3], contextKeys: i % 4 === 0 ? ['tenant:1'] : [] }),
        );
        // Every job twice, at the same time: the second write of each finds the first. Which of the two is stored
        // depends on the race (on PostgreSQL the rerun often wins), so what was stored is read from the answers.
        const reruns = messages.map((message) => ({ ...message, _id: newId() }));
        const results = await Promise.all([...messages, ...reruns].map((message) => store.messages.create(message)));
        const stored = results.filter((r) => r.created).map((r) => r.message);
        expect(stored).toHaveLength(60);
        expect(new Set(stored.map((m) => m._jobId)).size).toBe(60);
        for (const result of results) expect(stored.find((m) => m._jobId === result.message._jobId)?._id).toBe(result.message._id);
        stored.forEach((message) => written.set(message._id, message));
        const doomed = stored.slice(0, 20);
        await Promise.all(doomed.map((m) => store.messages.softDelete(scope.environmentId, m._id, new Date().toISOString())));
        await Promise.all(doomed.map((m) => store.messages.softDelete(scope.environmentId, m._id, new Date().toISOString())));
        doomed.forEach((m) => written.set(m._id, { ...m, deleted: true }));
        await expectTotals(scope, subscribers, written);
        expect(await totalOf(scope, {})).toBe(40);
      });

      it('reads a single scope from the counter and counts rows for combined filters', async () => {
        const scope = newScope();
        const subscriber = await insertSubscriber(store, scope, { subscriberId: 'probe' });
        const message = buildMessage(subscriber, { channel: 'email', contextKeys: ['tenant:1'] });
        await store.messages.create(message);
        // Skew every counter of the environment: the totals that come from counters show it, the others do not.
        await database.db.updateTable('message_counters').set({ count: sql<number>`count + 100` }).where('environment_id', '=', scope.environmentId).execute();
        expect(await totalOf(scope, {})).toBe(101);
        expect(await totalOf(scope, { channel: 'email' })).toBe(101);
        expect(await totalOf(scope, { subscriberId: 'probe' })).toBe(101);
        expect(await totalOf(scope, { contextKeys: ['tenant:1'] })).toBe(101);
        expect(await totalOf(scope, { channel: 'email', subscriberId: 'probe' })).toBe(1);
        expect(await totalOf(scope, { subscriberId: 'probe', contextKeys: ['tenant:1'] })).toBe(1);
        expect(await totalOf(scope, { transactionIds: [message.transactionId] })).toBe(1);
        expect(await totalOf(scope, { channel: 'email', seen: false })).toBe(1);
        expect(await totalOf(scope, { channel: 'sms' })).toBe(0);
      });
    });

    describe('event list by status', () => {
      // Both plans: from the status index (few such jobs, the default here) and walking the events newest first.
      it.each([
        ['from the status index', undefined],
        ['walking the events', 0],
      ] as const)('selects failed, pending, completed and canceled events from their jobs, with other filters and paging (%s)', async (_plan, fewIndexedStatusJobs) => {
        const store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)), fewIndexedStatusJobs });
        const scope = newScope();
        const other = newScope();
        const ada = await insertSubscriber(store, scope, { subscriberId: 'status-ada' });
        const bob = await insertSubscriber(store, scope, { subscriberId: 'status-bob' });
        const stranger = await insertSubscriber(store, other, { subscriberId: 'status-ada' });
        const built: BuiltEvent[] = [];
        for (let round = 0; round < 3; round++) {
          for (const [i, statuses] of STATUS_MIXES.entries()) {
            const subscriber = (round + i) % 2 === 0 ? ada : bob;
            const channels = statuses.map((_, step): StepType => (step % 2 === 0 ? 'in_app' : 'email'));
            // Times repeat within a round (ties break on id): the order is (createdAt, id), newest first.
            const result = buildNotificationEvent(subscriber, { createdAt: new Date(Date.UTC(2026, 0, 1, 0, round, i % 4)).toISOString(), channels });
            result.jobs.forEach((job, step) => (job.status = statuses[step]));
            built.push(result);
          }
        }
        // An event with no jobs has no status, and another environment's failed event is never listed.
        built.push(buildNotificationEvent(ada, { channels: [], createdAt: '2026-01-01T00:00:30.000Z' }));
        const foreign = buildNotificationEvent(stranger, { channels: ['in_app'], createdAt: '2026-01-01T00:00:30.000Z' });
        foreign.jobs[0].status = 'failed';
        await insertNotificationEvents(store, built);
        await insertNotificationEvents(store, [foreign]);

        const newestFirst = (x: BuiltEvent, y: BuiltEvent) =>
          x.event.createdAt === y.event.createdAt ? (x.event._id < y.event._id ? 1 : -1) : x.event.createdAt! < y.event.createdAt! ? 1 : -1;
        const expectList = async (filter: Partial<NotificationListFilter>, matches: (b: BuiltEvent) => boolean) => {
          const expected = built.filter(matches).sort(newestFirst).map((b) => b.event._id);
          for (const limit of [2, 5, 50]) {
            for (let page = 0; page * limit <= expected.length; page++) {
              const result = await store.notifications.list(scope.environmentId, { ...filter, page, limit });
              const context = { filter, limit, page };
              expect({ ...context, ids: result.data.map((e) => e._id), hasMore: result.hasMore }).toEqual({
                ...context,
                ids: expected.slice(page * limit, (page + 1) * limit),
                hasMore: expected.length > (page + 1) * limit,
              });
            }
          }
          return expected;
        };
        const counts: Record<string, number> = {};
        for (const status of EVENT_STATUSES) {
          counts[status] = (await expectList({ status }, (b) => eventStatusOf(b.jobs) === status)).length;
          await expectList({ status, subscriberIds: ['status-bob'] }, (b) => eventStatusOf(b.jobs) === status && b.event._subscriberId === bob._id);
          await expectList({ status, channels: ['email'] }, (b) => eventStatusOf(b.jobs) === status && b.event.channels!.includes('email'));
          await expectList(
            { status, after: '2026-01-01T00:00:59.000Z', before: '2026-01-01T00:02:00.000Z' },
            (b) => eventStatusOf(b.jobs) === status && b.event.createdAt! > '2026-01-01T00:00:59.000Z' && b.event.createdAt! < '2026-01-01T00:02:00.000Z',
          );
        }
        // Counted by hand from STATUS_MIXES, three rounds each.
        expect(counts).toEqual({ failed: 3 * 4, pending: 3 * 5, completed: 3 * 4, canceled: 3 * 2 });

        // A failed job retried leaves the failed list (and the index) at once; a canceled one rerun leaves canceled.
        const failedOne = built.find((b) => b.jobs.length === 1 && b.jobs[0].status === 'failed')!;
        await store.jobs.save({ ...failedOne.jobs[0], status: 'queued' });
        failedOne.jobs[0].status = 'queued';
        await expectList({ status: 'failed' }, (b) => eventStatusOf(b.jobs) === 'failed');
        await expectList({ status: 'pending' }, (b) => eventStatusOf(b.jobs) === 'pending');
        const canceledOne = built.find((b) => eventStatusOf(b.jobs) === 'canceled')!;
        await store.jobs.save({ ...canceledOne.jobs[0], status: 'completed' });
        canceledOne.jobs[0].status = 'completed';
        await expectList({ status: 'canceled' }, (b) => eventStatusOf(b.jobs) === 'canceled');
        await expectList({ status: 'completed' }, (b) => eventStatusOf(b.jobs) === 'completed');
      });
    });

    describe('event list by topicKey', () => {
      it('pages newest first by (createdAt, id), alone and combined with every other filter', async () => {
        const scope = newScope();
        const ada = await insertSubscriber(store, scope, { subscriberId: 'topic-ada', email: 'ada@example.com' });
        const bob = await insertSubscriber(store, scope, { subscriberId: 'topic-bob', email: 'bob@example.com' });
        const at = new Date().toISOString();
        const topicIds = new Map<string, string>();
        for (const key of ['news', 'other']) {
          const id = newId();
          await store.topics.create({ _id: id, _environmentId: scope.environmentId, _organizationId: scope.organizationId, key, createdAt: at, updatedAt: at });
          topicIds.set(key, id);
        }
        const [subscription] = await store.topics.addSubscriptions([
          { _id: newId(), _environmentId: scope.environmentId, _topicId: topicIds.get('news')!, topicKey: 'news', _subscriberId: ada._id, subscriberId: ada.subscriberId, createdAt: at },
        ]);
        // Times repeat (ties break on id, newest id first) and run against id order; some events are on both topics.
        const seconds = [5, 3, 3, 9, 1, 7, 3, 5, 8, 2, 6, 3, 4];
        const events: NotificationEvent[] = seconds.map((second, i) => {
          const subscriber = i % 3 === 0 ? bob : ada;
          const keys = i % 4 === 3 ? ['other'] : i % 4 === 2 ? ['news', 'other'] : ['news'];
          return buildNotificationEvent(subscriber, {
            createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
            channels: i % 2 === 0 ? ['in_app'] : ['email'],
            topics: keys.map((key) => ({ _topicId: topicIds.get(key)!, topicKey: key })),
            contextKeys: i % 5 === 0 ? ['tenant:1'] : [],
          }).event;
        });
        await store.transaction((tx) => tx.notifications.createMany(events.slice(0, 8)));
        for (const event of events.slice(8)) await store.notifications.createWithJobs(event, []);

        const newestFirst = (x: NotificationEvent, y: NotificationEvent) => (x.createdAt! === y.createdAt! ? (x._id < y._id ? 1 : -1) : x.createdAt! < y.createdAt! ? 1 : -1);
        const onTopic = (key: string) => (event: NotificationEvent) => event.topics!.some((t) => t.topicKey === key);
        const cases: Array<{ filter: Partial<NotificationListFilter>; matches: (event: NotificationEvent) => boolean }> = [
          { filter: {}, matches: () => true },
          { filter: { subscriberIds: [ada.subscriberId] }, matches: (e) => e._subscriberId === ada._id },
          { filter: { emails: ['bob@example.com'] }, matches: (e) => e._subscriberId === bob._id },
          { filter: { channels: ['email'] }, matches: (e) => e.channels!.includes('email') },
          { filter: { contextKeys: ['tenant:1'] }, matches: (e) => e.contextKeys!.includes('tenant:1') },
          { filter: { after: '2026-01-01T00:00:03.000Z', before: '2026-01-01T00:00:08.000Z' }, matches: (e) => e.createdAt! > '2026-01-01T00:00:03.000Z' && e.createdAt! < '2026-01-01T00:00:08.000Z' },
          // The subscription is ada's to news: it selects ada's news events, whichever topicKey drives the list.
          { filter: { subscriptionId: subscription._id }, matches: (e) => e._subscriberId === ada._id && onTopic('news')(e) },
          { filter: { transactionId: events[6].transactionId }, matches: (e) => e._id === events[6]._id },
          { filter: { search: 'topic-bob' }, matches: (e) => e._subscriberId === bob._id },
        ];
        for (const key of ['news', 'other']) {
          for (const { filter, matches } of cases) {
            const expected = events.filter(onTopic(key)).filter(matches).sort(newestFirst).map((e) => e._id);
            for (const limit of [1, 3, 20]) {
              for (let page = 0; page * limit <= expected.length; page++) {
                const result = await store.notifications.list(scope.environmentId, { ...filter, topicKey: key, page, limit });
                const context = { key, filter, limit, page };
                expect({ ...context, ids: result.data.map((e) => e._id), hasMore: result.hasMore }).toEqual({
                  ...context,
                  ids: expected.slice(page * limit, (page + 1) * limit),
                  hasMore: expected.length > (page + 1) * limit,
                });
              }
            }
          }
        }
        const newest = events.filter(onTopic('news')).sort(newestFirst)[0];
        const { jobs: _jobs, ...newestStored } = newest;
        const [first] = (await store.notifications.list(scope.environmentId, { topicKey: 'news', page: 0, limit: 1 })).data;
        expect(first).toMatchObject({ ...newestStored, jobs: [] });
        expect((await store.notifications.list(scope.environmentId, { topicKey: 'none', page: 0, limit: 5 })).data).toEqual([]);
      });

      it('filters by status (the failed and canceled indexes included), combined with topicKey', async () => {
        const scope = newScope();
        const topicId = newId();
        const at = new Date().toISOString();
        await store.topics.create({ _id: topicId, _environmentId: scope.environmentId, _organizationId: scope.organizationId, key: 'status-topic', createdAt: at, updatedAt: at });
        const subscriber = await insertSubscriber(store, scope, { subscriberId: 'status-topic-sub' });
        const built: BuiltEvent[] = STATUS_MIXES.map((statuses, i) => {
          const channels = statuses.map((_, step): StepType => (step % 2 === 0 ? 'in_app' : 'email'));
          const result = buildNotificationEvent(subscriber, {
            createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString(),
            channels,
            topics: i % 2 === 0 ? [{ _topicId: topicId, topicKey: 'status-topic' }] : [],
          });
          result.jobs.forEach((job, step) => (job.status = statuses[step]));
          return result;
        });
        await insertNotificationEvents(store, built);
        for (const status of EVENT_STATUSES) {
          const expected = built.filter((b) => b.event.topics!.length > 0 && eventStatusOf(b.jobs) === status).reverse().map((b) => b.event._id);
          expect(expected.length).toBeGreaterThan(0);
          const ids = (await store.notifications.list(scope.environmentId, { status, topicKey: 'status-topic', page: 0, limit: 50 })).data.map((e) => e._id);
          expect({ status, ids }).toEqual({ status, ids: expected });
        }
      });

      it('keeps the event time on its topic links when the event is saved', async () => {
        const scope = newScope();
        const subscriber = await insertSubscriber(store, scope);
        const at = new Date().toISOString();
        const topicId = newId();
        await store.topics.create({ _id: topicId, _environmentId: scope.environmentId, _organizationId: scope.organizationId, key: 'saved', createdAt: at, updatedAt: at });
        const older = buildNotificationEvent(subscriber, { createdAt: '2026-01-01T00:00:01.000Z', topics: [] }).event;
        const newer = buildNotificationEvent(subscriber, { createdAt: '2026-01-01T00:00:02.000Z', topics: [{ _topicId: topicId, topicKey: 'saved' }] }).event;
        await store.notifications.createMany([older, newer]);
        // The saved copy carries no createdAt: the link takes the stored one.
        const { createdAt: _createdAt, ...olderWithoutTime } = older;
        await store.notifications.save({ ...olderWithoutTime, topics: [{ _topicId: topicId, topicKey: 'saved' }], updatedAt: '2026-02-01T00:00:00.000Z' });
        const links = await database.db
          .selectFrom('notification_topics')
          .select(['notification_id', 'created_at'])
          .where('environment_id', '=', scope.environmentId)
          .orderBy('created_at')
          .execute();
        expect(links).toEqual([
          { notification_id: older._id, created_at: older.createdAt },
          { notification_id: newer._id, created_at: newer.createdAt },
        ]);
        const page = await store.notifications.list(scope.environmentId, { topicKey: 'saved', page: 0, limit: 10 });
        expect(page.data.map((e) => e._id)).toEqual([newer._id, older._id]);
      });
    });
  });
}
