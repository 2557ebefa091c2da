import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/store/sql/schema.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { openSqlitePlanProbe, type SqlitePlanProbe } from '../../helpers/sqlite-plan-probe.js';
import { buildMessage, insertNotificationEvent, insertSubscriber } from '../../helpers/factories.js';
import { notificationsByIds } from '../../../src/store/sql/notification-repository.js';

/**
 * The point lookups on the trigger path must be index searches on SQLite, whatever the table size (checked with
 * EXPLAIN QUERY PLAN on the statements the repositories really send), and must state `deleted = 0` as a literal:
 * the unique indexes are partial (`WHERE deleted = 0`), and with a bound parameter SQLite can only use them by
 * planning the statement again at every execution (32 µs instead of 11 µs a lookup over 20,000 subscribers).
 */
describe('SQLite query plans of point lookups', () => {
  let probe: SqlitePlanProbe;
  let db: Kysely<Database>;
  let store: SqlStore;
  let plans: BetterSqlite3.Database;
  let sent: CompiledQuery[];

  beforeAll(async () => {
    probe = await openSqlitePlanProbe('herald-plans-');
    ({ db, store, plans, sent } = probe);
  });

  afterAll(async () => {
    await probe.close();
  });

  async function planOf(lookup: () => Promise<unknown>): Promise<string[]> {
    sent.length = 0;
    await lookup();
    expect(sent).toHaveLength(1);
    const [query] = sent;
    return (plans.prepare(`explain query plan ${query.sql}`).all(...(query.parameters as unknown[])) as Array<{ detail: string }>).map(
      (row) => row.detail,
    );
  }

  it.each([
    ['subscribers.findBySubscriberId', () => store.subscribers.findBySubscriberId('env', 'subscriber-1'), 'subscribers_subscriber_id_unique'],
    ['workflows.get by workflowId', () => store.workflows.get('env', 'welcome'), 'workflows_workflow_id_unique'],
    ['integrations.findByIdentifier', () => store.integrations.findByIdentifier('env', 'sendgrid-main'), undefined],
  ])('%s searches an index', async (_name, lookup, expectedIndex) => {
    const plan = await planOf(lookup);
    expect(sent[0].sql).toMatch(/"deleted" = 0\b/);
    expect(plan.join('\n')).not.toMatch(/^SCAN/m);
    if (expectedIndex) expect(plan.join('\n')).toContain(expectedIndex);
  });

  it('a messages page with rows written before their list text (0028) reads those rows by the primary key', async () => {
    const subscriber = await insertSubscriber(store, { environmentId: 'env', organizationId: 'org' });
    // This store writes no list text (no messageText option): every row takes the path of rows written before 0028.
    await store.messages.create(buildMessage(subscriber));
    sent.length = 0;
    const page = await store.messages.listStored('env', { subscriberId: subscriber.subscriberId, page: 0, limit: 10 });
    expect(page.data).toHaveLength(1);
    const byIds = sent.find((query) => /"id" in \(/.test(query.sql));
    expect(byIds, sent.map((query) => query.sql).join('\n')).toBeDefined();
    const plan = planOfQuery(byIds!);
    expect(plan).toContain('sqlite_autoindex_messages_1');
    expect(plan).not.toMatch(/messages_env/);
  });

  it('triggers.listStale (the accepted-trigger sweep) reads the partial index of accepted triggers, not the table', async () => {
    const plan = (await planOf(() => store.triggers.listStale('2026-01-01T00:00:00.000Z', 100))).join('\n');
    expect(plan).toContain('triggers_accepted');
    expect(plan).not.toMatch(/^SCAN/m);
  });

  function planOfQuery(query: CompiledQuery): string {
    return (plans.prepare(`explain query plan ${query.sql}`).all(...(query.parameters as unknown[])) as Array<{ detail: string }>).map((row) => row.detail).join('\n');
  }

  // The event list's status filter states each partial index's condition as written in migration 0016 (or SQLite
  // would not use it, and the list would read every event of the environment), and with few such jobs starts from
  // them: events by primary key, not the environment's events in time order.
  it.each([
    ['failed', 'jobs_failed'],
    ['pending', 'jobs_unfinished'],
    ['canceled', 'jobs_canceled'],
  ] as const)('the event list filtered by %s reads %s', async (status, index) => {
    sent.length = 0;
    await store.notifications.list('env', { status, page: 0, limit: 10 });
    const [count, page] = sent;
    expect(planOfQuery(count)).toContain(index);
    const pagePlan = planOfQuery(page);
    expect(pagePlan).toContain(index);
    expect(pagePlan).toContain('sqlite_autoindex_notifications_1');
    expect(pagePlan).not.toContain('notifications_env_created');
  });

  it('the digest index (digest jobs only) serves the jobs of a digest group', async () => {
    const plan = (await planOf(() => store.triggers.listJobsInGroup('env', 'group-1', ['delayed', 'completed']))).join('\n');
    expect(plan).toContain('jobs_digest_group');
    expect(plan).not.toMatch(/^SCAN/m);
  });

  // Without statistics SQLite preferred an index starting with environment_id for these and read every row of the
  // environment (marking ten messages read scanned all of them); they must search the primary key.
  it.each([
    ['subscribers.getMany', () => store.subscribers.getMany('env', ['s1', 's2', 's3']), 'sqlite_autoindex_subscribers_1'],
    ['messages.markAs', () => store.messages.markAs('env', ['m1', 'm2', 'm3'], 'read', '2026-01-01T00:00:00.000Z'), 'sqlite_autoindex_messages_1'],
    [
      'messages.findInAppForSubscriber',
      () => store.messages.findInAppForSubscriber('env', 'subscriber-internal', ['m1', 'm2', 'm3']),
      'sqlite_autoindex_messages_1',
    ],
  ])('%s looks its rows up by primary key', async (_name, lookup, primaryKey) => {
    const plan = (await planOf(lookup)).join('\n');
    expect(plan).toContain(primaryKey);
    expect(plan).not.toMatch(/^SCAN/m);
  });
  // Events by a list of ids with the environment checked: SQLite without statistics planned `environment_id = ? and
  // id in (...)` as a search of an index that starts with the environment (notifications_env_transaction_list), so
  // it read every event of the environment; a deep events page of events without kept texts took 100-200 ms at 100k
  // events and more than 5 s under load at 1M (bench:data-size). Both must read the ids by the primary key.
  // The plan turns at about ten ids (three were read by the primary key): a page of 10 reads 11.
  it('a deep events page reads its events without a kept text by the primary key', () => {
    const ids = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`n${i}`, `event-${i}`]));
    const query = notificationsByIds.compile(db, 'sqlite', { environmentId: 'env', ...ids });
    const plan = planOfQuery(query);
    expect(plan).toContain('sqlite_autoindex_notifications_1');
    expect(plan).not.toMatch(/notifications_env/);
  });

  // Migration 0032 dropped execution_details_job (an index entry per detail written, three per in-app delivery): a
  // job's details are read through its event, and must not scan the table. The job's own details only, in order.
  it("jobs.get reads the job's details through its event's index, and only that job's", async () => {
    const subscriber = await insertSubscriber(store, { environmentId: 'env-job-get', organizationId: 'org' });
    const event = await insertNotificationEvent(store, subscriber);
    const [, email] = event.jobs;
    sent.length = 0;
    const job = await store.jobs.get('env-job-get', email!._id);
    expect(job?.executionDetails.map((detail) => detail._id)).toEqual(email!.executionDetails.map((detail) => detail._id));
    const details = sent.find((query) => /from "execution_details"/.test(query.sql));
    expect(details, sent.map((query) => query.sql).join('\n')).toBeDefined();
    const plan = planOfQuery(details!);
    expect(plan).toContain('execution_details_notification');
    expect(plan).not.toMatch(/^SCAN/m);
  });

  // Migration 0038 made the context indexes partial (rows with context keys only) and the events' email index too
  // (events of subscribers with an email only). A filter reads them only when the query implies their condition: the
  // context filters state it as a literal (contextKeysAre), an email compared with `=` or `IN (one)` implies it.
  async function plansOf(read: () => Promise<unknown>, table: string): Promise<string[]> {
    sent.length = 0;
    await read();
    const reads = sent.filter((query) => new RegExp(`from "${table}"`).test(query.sql));
    expect(reads.length, sent.map((query) => query.sql).join('\n')).toBeGreaterThan(0);
    return reads.map(planOfQuery);
  }

  it.each([
    ['messages.list', () => plansOf(() => store.messages.list('env', { contextKeys: ['tenant:a'], page: 0, limit: 10 }), 'messages'), 'messages_env_context_list'],
    ['messages.listStored', () => plansOf(() => store.messages.listStored('env', { contextKeys: ['tenant:a', 'region:eu'], page: 2, limit: 10 }), 'messages'), 'messages_env_context_list'],
    [
      'messages.list with a transactionId',
      () => plansOf(() => store.messages.list('env', { contextKeys: ['tenant:a'], transactionIds: ['t1', 't2'], page: 0, limit: 10 }), 'messages'),
      /messages_env_(context|transaction)_list/,
    ],
    ['notifications.list', () => plansOf(() => store.notifications.list('env', { contextKeys: ['tenant:a'], page: 0, limit: 10 }), 'notifications'), 'notifications_env_context_list'],
  ] as const)('%s filtered by context keys reads the partial context index', async (_name, read, index) => {
    const plans = await read();
    for (const plan of plans) {
      expect(plan).toMatch(index);
      expect(plan).not.toMatch(/^SCAN (messages|notifications)\b/m);
    }
  });

  it('the event list filtered by one email reads the partial email index', async () => {
    const plans = await plansOf(() => store.notifications.list('env', { emails: ['ada@example.com'], page: 0, limit: 10 }), 'notifications');
    for (const plan of plans) {
      expect(plan).toContain('notifications_env_email_list');
      expect(plan).not.toMatch(/^SCAN (messages|notifications)\b/m);
    }
  });

  it('a filter for no context keys (not sent by the API) still finds the messages and events without keys', async () => {
    const subscriber = await insertSubscriber(store, { environmentId: 'env-no-context', organizationId: 'org' });
    const withKeys = buildMessage(subscriber, { contextKeys: ['tenant:a'] });
    const without = buildMessage(subscriber);
    await store.messages.createMany([withKeys, without]);
    const page = await store.messages.list('env-no-context', { contextKeys: [], page: 0, limit: 10 });
    expect(page.data.map((message) => message._id)).toEqual([without._id]);
    expect(page.totalCount).toBe(1);
    const keyed = await store.messages.list('env-no-context', { contextKeys: ['tenant:a'], page: 0, limit: 10 });
    expect(keyed.data.map((message) => message._id)).toEqual([withKeys._id]);
    const event = await insertNotificationEvent(store, subscriber);
    const events = await store.notifications.list('env-no-context', { contextKeys: [], page: 0, limit: 10 });
    expect(events.data.map((found) => found._id)).toContain(event._id);
  });

  it('retention deletes a batch of expired events by the primary key', async () => {
    const subscriber = await insertSubscriber(store, { environmentId: 'env-retention', organizationId: 'org' });
    for (let i = 0; i < 12; i++) await insertNotificationEvent(store, subscriber, { createdAt: `2020-01-01T00:00:${String(i).padStart(2, '0')}.000Z` });
    sent.length = 0;
    const deleted = await store.retention.deleteExpiredEvents('env-retention', '2021-01-01T00:00:00.000Z', 100);
    expect(deleted.events).toBe(12);
    const deleteEvents = sent.find((query) => /^delete from "notifications"/.test(query.sql));
    expect(deleteEvents, sent.map((query) => query.sql).join('\n')).toBeDefined();
    const plan = planOfQuery(deleteEvents!);
    expect(plan).toContain('sqlite_autoindex_notifications_1');
    expect(plan).not.toMatch(/notifications_env/);
  });
});
