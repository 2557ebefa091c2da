import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { newId } from '../../../src/domain/ids.js';
import type { Message, Subscriber } from '../../../src/domain/types.js';
import type { Store, StoredJob } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { sweepRetention } from '../../../src/usecases/retention/sweep-retention.js';
import type { Logger } from '../../../src/usecases/deps.js';
import { buildMessage, buildNotificationEvent, insertMessages, insertNotificationEvents, insertSubscriber, type Scope } from '../../helpers/factories.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/**
 * The retention sweep on SQLite and PostgreSQL: expired events (with jobs, execution details, topic links), trigger
 * records and messages are deleted in batches; fresh rows and events with an unfinished job stay; the message counters
 * (totalCount of GET /v1/messages per scope) stay exact; one sweeper at a time; freed pages go back to the file.
 */
const implementations: Array<{ name: string; available: boolean; open: () => Promise<TestSqlDatabase> }> = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

const DAY = 24 * 3600 * 1000;
const silent: Logger = { info() {}, warn() {}, error() {}, debug() {}, child: () => silent };

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`retention sweep on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: Store;
    const scope: Scope = { environmentId: newId(), organizationId: newId() };
    const other: Scope = { environmentId: newId(), organizationId: scope.organizationId };
    const now = Date.now();
    const clock = { now: () => now };
    const config = loadConfig({ HERALD_RETENTION_DAYS: '30', HERALD_MESSAGE_RETENTION_DAYS: '60', HERALD_RETENTION_BATCH_SIZE: '3', HERALD_RETENTION_PAUSE_MS: '0' });
    const announced: string[] = [];
    const realtime = { messageDelivered() {}, subscriberChanged() {}, messagesChanged: (audience: { subscriberRecordId: string }) => void announced.push(audience.subscriberRecordId) };
    const deps = () => ({ config, clock, store, logger: silent, realtime });

    beforeAll(async () => {
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      const at = new Date(now).toISOString();
      await database.db.insertInto('organizations').values({ id: scope.organizationId, name: 'org', created_at: at }).execute();
      for (const [index, environment] of [scope, other].entries()) {
        await database.db
          .insertInto('environments')
          .values({ id: environment.environmentId, organization_id: scope.organizationId, name: `env${index}`, identifier: randomBytes(6).toString('hex'), created_at: at })
          .execute();
      }
    });
    afterAll(async () => {
      await database?.close();
    });

    const isoDaysAgo = (days: number, offsetMs = 0) => new Date(now - days * DAY + offsetMs).toISOString();
    /** A record id made at that time, as production makes them (ids start with their creation second). */
    const idAt = (iso: string) => newId(Date.parse(iso));

    async function seedEvents(subscriber: Subscriber, count: number, daysAgo: number, status: StoredJob['status'] = 'completed') {
      const built = Array.from({ length: count }, (_, index) => {
        const createdAt = isoDaysAgo(daysAgo, index);
        const event = buildNotificationEvent(subscriber, { _id: idAt(createdAt), createdAt });
        for (const job of event.jobs) job.status = status;
        return event;
      });
      await insertNotificationEvents(store, built);
      return built.map(({ event }) => event._id);
    }

    async function seedMessages(subscriber: Subscriber, count: number, daysAgo: number, overrides: Partial<Message> = {}) {
      const messages = Array.from({ length: count }, (_, index) => {
        const createdAt = isoDaysAgo(daysAgo, index);
        return buildMessage(subscriber, { _id: idAt(createdAt), createdAt, updatedAt: createdAt, channel: index % 2 ? 'email' : 'in_app', ...overrides });
      });
      await insertMessages(store, messages);
      return messages;
    }

    async function seedTrigger(environment: Scope, daysAgo: number, state: 'accepted' | 'processed' | 'failed') {
      const createdAt = isoDaysAgo(daysAgo);
      const id = idAt(createdAt);
      await store.triggers.create({
        _id: id,
        environmentId: environment.environmentId,
        organizationId: environment.organizationId,
        transactionId: `tx-${id}`,
        workflowId: 'welcome',
        request: {},
        state,
        createdAt,
        updatedAt: createdAt,
      });
      return id;
    }

    const count = async (table: 'notifications' | 'jobs' | 'execution_details' | 'messages' | 'triggers' | 'notification_topics', ids?: { column: string; values: string[] }) => {
      let query = database.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n'));
      if (ids) query = query.where(sql.ref(ids.column), 'in', ids.values.length ? ids.values : ['none']);
      return Number((await query.executeTakeFirstOrThrow()).n);
    };

    /** Every totalCount GET /v1/messages answers from the counters, checked against counting the rows. */
    async function expectCountersExact(environment: Scope, subscribers: Subscriber[]) {
      const filters = [{}, { channel: 'in_app' as const }, { channel: 'email' as const }, ...subscribers.map((s) => ({ subscriberId: s.subscriberId }))];
      for (const filter of filters) {
        const page = await store.messages.list(environment.environmentId, { ...filter, page: 0, limit: 1 });
        let rows = database.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('environment_id', '=', environment.environmentId)
          .where('deleted', '=', 0);
        if ('channel' in filter) rows = rows.where('channel', '=', filter.channel!);
        if ('subscriberId' in filter) rows = rows.where('external_subscriber_id', '=', filter.subscriberId!);
        expect(page.totalCount, JSON.stringify(filter)).toBe(Number((await rows.executeTakeFirstOrThrow()).n));
      }
    }

    it('deletes expired events, jobs, details, triggers and messages in batches, keeps fresh rows and unfinished events, keeps counters exact', async () => {
      const ada = await insertSubscriber(store, scope, { subscriberId: `ada-${newId()}` });
      const bob = await insertSubscriber(store, scope, { subscriberId: `bob-${newId()}` });
      const eve = await insertSubscriber(store, other, { subscriberId: `eve-${newId()}` });

      const expiredEvents = [...(await seedEvents(ada, 7, 40)), ...(await seedEvents(eve, 2, 31))];
      const busyEvent = await seedEvents(bob, 1, 45, 'delayed');
      const freshEvents = [...(await seedEvents(ada, 3, 29)), ...(await seedEvents(eve, 1, 1))];
      await database.db
        .insertInto('notification_topics')
        .values([expiredEvents[0], freshEvents[0]].map((id) => ({ notification_id: id, environment_id: scope.environmentId, topic_id: newId(), topic_key: 'news', subscription_id: null, created_at: isoDaysAgo(40) })))
        .execute();

      const expiredTriggers = [await seedTrigger(scope, 40, 'processed'), await seedTrigger(scope, 35, 'failed'), await seedTrigger(other, 31, 'processed')];
      const keptTriggers = [await seedTrigger(scope, 40, 'accepted'), await seedTrigger(scope, 2, 'processed')];

      const expiredMessages = [
        ...(await seedMessages(ada, 5, 70)),
        ...(await seedMessages(bob, 3, 61)),
        ...(await seedMessages(ada, 2, 65, { deleted: true })),
        ...(await seedMessages(eve, 4, 90)),
      ];
      const freshMessages = [...(await seedMessages(ada, 2, 59)), ...(await seedMessages(bob, 3, 40)), ...(await seedMessages(eve, 1, 0))];
      await expectCountersExact(scope, [ada, bob]);

      const pauses: number[] = [];
      const summary = await sweepRetention(deps(), { owner: 'worker-1', sleep: async (ms) => void pauses.push(ms) });

      expect(summary).toMatchObject({
        owner: 'worker-1',
        events: expiredEvents.length,
        jobs: expiredEvents.length * 2,
        executionDetails: expiredEvents.length * 4,
        triggers: expiredTriggers.length,
        messages: expiredMessages.length,
        interrupted: false,
      });
      // Batches of 3: 9 events over two environments, 3 triggers, 14 messages, each batch followed by a pause.
      expect(pauses.length).toBeGreaterThanOrEqual(Math.ceil(7 / 3) + Math.ceil(2 / 3) + 1 + Math.ceil(14 / 3));

      expect(await count('notifications', { column: 'id', values: expiredEvents })).toBe(0);
      expect(await count('jobs', { column: 'notification_id', values: expiredEvents })).toBe(0);
      expect(await count('execution_details', { column: 'notification_id', values: expiredEvents })).toBe(0);
      expect(await count('notification_topics', { column: 'notification_id', values: expiredEvents })).toBe(0);
      expect(await count('notifications', { column: 'id', values: [...freshEvents, ...busyEvent] })).toBe(freshEvents.length + 1);
      expect(await count('jobs', { column: 'notification_id', values: busyEvent })).toBe(2);
      expect(await count('execution_details', { column: 'notification_id', values: freshEvents })).toBe(freshEvents.length * 4);
      expect(await count('notification_topics', { column: 'notification_id', values: freshEvents })).toBe(1);
      expect(await count('triggers', { column: 'id', values: expiredTriggers })).toBe(0);
      expect(await count('triggers', { column: 'id', values: keptTriggers })).toBe(2);
      expect(await count('messages', { column: 'id', values: expiredMessages.map((m) => m._id) })).toBe(0);
      expect(await count('messages', { column: 'id', values: freshMessages.map((m) => m._id) })).toBe(freshMessages.length);
      await expectCountersExact(scope, [ada, bob]);
      await expectCountersExact(other, [eve]);
      expect(await store.retention.lastSweep()).toEqual(summary);
      // The Inboxes that lost unread in-app messages are told (sockets refetch, kept answers are dropped).
      expect(new Set(announced)).toEqual(new Set([ada._id, bob._id, eve._id]));

      // Nothing left to do: a second sweep deletes nothing.
      const again = await sweepRetention(deps(), { owner: 'worker-1', sleep: async () => undefined });
      expect(again).toMatchObject({ events: 0, jobs: 0, triggers: 0, messages: 0 });
    });

    it('lets one sweeper hold the lease at a time, and a crashed holder lose it when it expires', async () => {
      const sleep = async () => undefined;
      // Sweeper a stops in its first pause, holding the lease, until b has tried.
      let resume!: () => void;
      const resumed = new Promise<void>((resolve) => (resume = resolve));
      let paused!: () => void;
      const inPause = new Promise<void>((resolve) => (paused = resolve));
      const first = sweepRetention(deps(), { owner: 'a', sleep: async () => { paused(); await resumed; } });
      await inPause;
      expect(await sweepRetention(deps(), { owner: 'b', sleep })).toBeUndefined();
      resume();
      expect(await first).toMatchObject({ owner: 'a', interrupted: false });
      // Released at the end of a's sweep: b's turn.
      expect(await sweepRetention(deps(), { owner: 'b', sleep })).toMatchObject({ owner: 'b' });

      const at = (ms: number) => new Date(now + ms).toISOString();
      expect(await store.retention.tryLease('test', 'a', at(60_000), at(0))).toBe(true);
      expect(await store.retention.tryLease('test', 'b', at(60_000), at(1_000))).toBe(false);
      expect(await store.retention.tryLease('test', 'a', at(120_000), at(2_000))).toBe(true);
      expect(await store.retention.tryLease('test', 'b', at(200_000), at(120_001))).toBe(true);
      await store.retention.releaseLease('test', 'a');
      expect(await store.retention.tryLease('test', 'a', at(300_000), at(130_000))).toBe(false);
      await store.retention.releaseLease('test', 'b');
      expect(await store.retention.tryLease('test', 'a', at(300_000), at(130_000))).toBe(true);
    });

    it('counts each message once when two sweepers delete the same rows at once, soft-deleted ones never', async () => {
      const zed = await insertSubscriber(store, scope, { subscriberId: `zed-${newId()}` });
      const ids = [...(await seedMessages(zed, 20, 80)), ...(await seedMessages(zed, 4, 80, { deleted: true }))].map((m) => m._id);
      const before = new Date(now - 60 * DAY).toISOString();
      const otherStore = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      let deleted = 0;
      for (;;) {
        const [a, b] = await Promise.all([
          store.retention.deleteExpiredMessages(scope.environmentId, before, 5),
          otherStore.retention.deleteExpiredMessages(scope.environmentId, before, 5),
        ]);
        deleted += a.deleted + b.deleted;
        if (a.deleted + b.deleted === 0) break;
      }
      expect(deleted).toBe(24);
      expect(await count('messages', { column: 'id', values: ids })).toBe(0);
      await expectCountersExact(scope, [zed]);
      const page = await store.messages.list(scope.environmentId, { subscriberId: zed.subscriberId, page: 0, limit: 1 });
      expect(page.totalCount).toBe(0);
    });

    it('stops at the next batch when asked (shutdown) and records the sweep as interrupted', async () => {
      const yan = await insertSubscriber(store, scope, { subscriberId: `yan-${newId()}` });
      await seedMessages(yan, 10, 80);
      let batches = 0;
      const summary = await sweepRetention(deps(), { owner: 'c', sleep: async () => void batches++, shouldStop: () => batches >= 2 });
      expect(summary?.interrupted).toBe(true);
      expect(summary!.messages).toBeLessThan(10);
      await expectCountersExact(scope, [yan]);
    });

    it.runIf(implementation.name === 'SQLite')('gives freed pages back to the file system (incremental auto-vacuum)', async () => {
      const pragma = async (name: string) => Number(Object.values((await sql.raw(`pragma ${name}`).execute(database.db)).rows[0] as object)[0]);
      expect(await pragma('auto_vacuum')).toBe(2);
      const big = await insertSubscriber(store, scope, { subscriberId: `big-${newId()}` });
      await seedMessages(big, 400, 80, { payload: { blob: 'x'.repeat(8000) } });
      const pagesBefore = await pragma('page_count');
      const summary = await sweepRetention(deps(), { owner: 'd', sleep: async () => undefined });
      expect(summary!.messages).toBeGreaterThanOrEqual(400); // with what the interrupted sweep above left
      expect(summary!.reclaimedPages).toBeGreaterThan(400);
      expect(await pragma('freelist_count')).toBe(0);
      expect(await pragma('page_count')).toBeLessThan(pagesBefore - 400);
    });
  });
}
