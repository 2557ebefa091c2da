import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchesDataFilter, type InboxFilter } from '../../../src/domain/inbox.js';
import { normalizeContextKeys } from '../../../src/domain/context-keys.js';
import { newId } from '../../../src/domain/ids.js';
import type { Message, Severity, Subscriber } from '../../../src/domain/types.js';
import type { Store } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { buildMessage, insertSubscriber, type Scope } from '../../helpers/factories.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/**
 * The Inbox's list and count queries against a reference written in JavaScript, on SQLite and PostgreSQL. The
 * statements are compiled once per filter shape and reused with other values, and the count route's filters are
 * counted in one statement: every filter below is checked both alone and among the others, and filters of one shape
 * with different values follow each other, so a value kept from an earlier call would show.
 */
const implementations: Array<{ name: string; available: boolean; open: () => Promise<TestSqlDatabase> }> = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

const SEVERITY_CYCLE: Severity[] = ['high', 'medium', 'low', 'none'];
const CONTEXT_CYCLE: Array<string[] | undefined> = [['tenant:acme'], ['tenant:acme', 'team:red'], undefined];
const TAG_CYCLE = [['billing'], ['billing', 'security'], [], ['security'], ['100%_off']];

/** What the Inbox filter means, message by message (the SQL must agree). */
function matches(message: Message, filter: InboxFilter): boolean {
  if (message.deleted || message.channel !== 'in_app') return false;
  if (filter.read !== undefined && message.read !== filter.read) return false;
  if (filter.seen !== undefined && message.seen !== filter.seen) return false;
  if (filter.archived !== undefined && (message.archived ?? false) !== filter.archived) return false;
  if (filter.snoozed !== undefined && (message.snoozedUntil !== undefined) !== filter.snoozed) return false;
  if (filter.severity !== undefined && !filter.severity.includes(message.severity ?? 'none')) return false;
  for (const group of filter.tags ?? []) if (!group.some((tag) => (message.tags ?? []).includes(tag))) return false;
  if (filter.createdGte !== undefined && message.createdAt < filter.createdGte) return false;
  if (filter.createdLte !== undefined && message.createdAt > filter.createdLte) return false;
  if (filter.contextKeys !== undefined && normalizeContextKeys(message.contextKeys) !== normalizeContextKeys(filter.contextKeys)) return false;
  return filter.data === undefined || matchesDataFilter(message.data, filter.data);
}

const newestFirst = (a: Message, b: Message) => (a.createdAt === b.createdAt ? (a._id < b._id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1);

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`Inbox queries on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: Store;
    const scope: Scope = { environmentId: newId(), organizationId: newId() };
    let subscriber: Subscriber;
    const messages: Message[] = [];
    const at = (second: number) => new Date(Date.UTC(2026, 2, 1, 0, 0, second)).toISOString();

    beforeAll(async () => {
      database = await implementation.open();
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      subscriber = await insertSubscriber(store, scope, { subscriberId: 'inbox-queries' });
      const other = await insertSubscriber(store, scope, { subscriberId: 'someone-else' });
      for (let index = 0; index < 40; index++) {
        // Two messages share each createdAt: the order falls back to the id.
        const message = buildMessage(subscriber, {
          createdAt: at(Math.floor(index / 2)),
          read: index % 3 === 0,
          seen: index % 3 === 0 || index % 5 === 0,
          ...({
            archived: index % 7 === 0,
            archivedAt: index % 7 === 0 ? at(100) : undefined,
            snoozedUntil: index % 11 === 0 ? at(1000) : undefined,
            severity: SEVERITY_CYCLE[index % 4],
            tags: TAG_CYCLE[index % 5],
            data: { kind: index % 2 ? 'odd' : 'even', n: index },
            ...(CONTEXT_CYCLE[index % 3] ? { contextKeys: CONTEXT_CYCLE[index % 3] } : {}),
          } as Partial<Message>),
        });
        messages.push(message);
      }
      await store.transaction((tx) => tx.messages.createMany(messages));
      // Not the subscriber's Inbox: a deleted message, another subscriber's, another channel's.
      const deleted = buildMessage(subscriber, { createdAt: at(50) });
      await store.messages.createMany([deleted, buildMessage(other, { createdAt: at(51) }), buildMessage(subscriber, { channel: 'email', createdAt: at(52) })]);
      await store.messages.softDelete(scope.environmentId, deleted._id, at(53));
    });
    afterAll(async () => {
      await database?.close();
    });

    const filters: InboxFilter[] = [
      {},
      { read: false, archived: false, snoozed: false, severity: ['high'] },
      { read: false, archived: false, snoozed: false, severity: ['medium'] },
      { read: false, archived: false, snoozed: false, severity: ['low'] },
      { read: false, archived: false, snoozed: false, severity: ['none'] },
      { read: true },
      { seen: false, archived: true },
      { snoozed: true },
      { severity: ['high', 'low'] },
      { severity: [] },
      { tags: [['billing']] },
      { tags: [['security', '100%_off']] },
      { tags: [['billing'], ['security']] },
      { tags: [['100%']] },
      { createdGte: at(5), createdLte: at(9) },
      { createdGte: at(12) },
      { data: { kind: 'odd' } },
      { data: { kind: 'even' }, read: false },
      { data: { n: 1000 } },
      { contextKeys: ['tenant:acme'] },
      { contextKeys: ['team:red', 'tenant:acme'], read: false },
      { contextKeys: [] },
      { contextKeys: ['tenant:globex'] },
    ];

    it('counts each filter, alone and together in one call, as the reference does', async () => {
      const expected = filters.map((filter) => messages.filter((message) => matches(message, filter)).length);
      expect(await store.messages.countInbox(scope.environmentId, subscriber._id, filters)).toEqual(expected);
      for (const [index, filter] of filters.entries()) {
        expect(await store.messages.countInbox(scope.environmentId, subscriber._id, [filter]), JSON.stringify(filter)).toEqual([expected[index]]);
      }
      // The same filters in another order (each at another position of the statement) and another subscriber's counts.
      const reversed = [...filters].reverse();
      expect(await store.messages.countInbox(scope.environmentId, subscriber._id, reversed)).toEqual([...expected].reverse());
      expect(await store.messages.countInbox(scope.environmentId, newId(), filters)).toEqual(filters.map(() => 0));
      expect(await store.messages.countInbox(scope.environmentId, subscriber._id, [])).toEqual([]);
    });

    it('lists each filter page by page, by offset and by cursor, as the reference does', async () => {
      for (const filter of filters) {
        const all = messages.filter((message) => matches(message, filter)).sort(newestFirst).map((message) => message._id);
        const label = JSON.stringify(filter);
        const first = await store.messages.listInbox(scope.environmentId, subscriber._id, filter, { offset: 0, limit: 4 });
        expect(first.data.map((message) => message._id), label).toEqual(all.slice(0, 4));
        expect(first.hasMore, label).toBe(all.length > 4);
        const second = await store.messages.listInbox(scope.environmentId, subscriber._id, filter, { offset: 4, limit: 4 });
        expect(second.data.map((message) => message._id), label).toEqual(all.slice(4, 8));
        if (all.length < 3) continue;
        const after = (await store.messages.findInboxPosition(scope.environmentId, subscriber._id, all[2]!))!;
        const next = await store.messages.listInbox(scope.environmentId, subscriber._id, filter, { after, offset: 1, limit: 3 });
        expect(next.data.map((message) => message._id), label).toEqual(all.slice(4, 7));
        expect(next.hasMore, label).toBe(all.length > 7);
      }
    });

    it('reads every field back from a page', async () => {
      const [newest] = (await store.messages.listInbox(scope.environmentId, subscriber._id, { snoozed: true }, { offset: 0, limit: 1 })).data;
      const expected = messages.filter((message) => matches(message, { snoozed: true })).sort(newestFirst)[0]!;
      expect(newest).toMatchObject({ _id: expected._id, snoozedUntil: at(1000), severity: expected.severity, tags: expected.tags, data: expected.data, archived: expected.archived });
      expect(await store.messages.findInboxPosition(scope.environmentId, newId(), expected._id)).toBeUndefined();
    });
  });
}
