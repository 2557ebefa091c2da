import { randomBytes } from 'node:crypto';
import { messagePageSchemaSerializer } from '../../helpers/message-page.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Caller } from '../../../src/domain/types.js';
import type { Deps } from '../../../src/usecases/deps.js';
import { listMessages } from '../../../src/usecases/messages/list-messages.js';
import type { Message, Subscriber } from '../../../src/domain/types.js';
import { messageListText, messageListTextHoldingDocument, serializeMessagePage } from '../../../src/http/message-page-serializer.js';
import type { MessageListFilter, Store } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { buildMessage, createScope, insertSubscriber, type Scope } from '../../helpers/factories.js';

/**
 * Each message's list text (migration 0028) is rewritten by every write of the message, so a page written from the
 * texts is byte for byte the page the response schema writes from the Messages, after every kind of change; rows
 * without a text (older rows, a store without a writer) are listed from their columns in the same page.
 */
const implementations = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

const schemaSerializer = messagePageSchemaSerializer;

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`message list texts on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    /** Writes list texts. */
    let store: Store;
    /** The same database through a store without a writer (as the CLI's or an older process's). */
    let plain: Store;
    let scope: Scope;
    let ada: Subscriber;
    let grace: Subscriber;

    async function textsOf(ids: string[]): Promise<Map<string, string | null>> {
      const rows = await database.db.selectFrom('messages').select(['id', 'list_text']).where('id', 'in', ids).execute();
      return new Map(rows.map((row) => [row.id, row.list_text ?? null]));
    }

    /** The route's page from the stored texts, and what the schema serializer writes for the same Messages. */
    async function pages(filter: Omit<MessageListFilter, 'page' | 'limit'>, page = 0, limit = 50): Promise<{ written: string; expected: string }> {
      const listed = await store.messages.listStored(scope.environmentId, { ...filter, page, limit });
      for (const message of listed.data) message.subscriber = [ada, grace].find((subscriber) => subscriber._id === message.subscriberRecordId);
      const messages = await store.messages.list(scope.environmentId, { ...filter, page, limit });
      for (const message of messages.data) message.subscriber = [ada, grace].find((subscriber) => subscriber._id === message._subscriberId);
      return { written: serializeMessagePage(listed), expected: schemaSerializer(messages) };
    }

    beforeAll(async () => {
      database = await implementation.open();
      const secretBox = new SecretBox(randomBytes(32));
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox, messageText: messageListText, messageTextHoldingDocument: messageListTextHoldingDocument });
      plain = new SqlStore(database.db, { dialect: database.dialect, secretBox });
      scope = await createScope(store);
      ada = await insertSubscriber(store, scope, { subscriberId: 'ada', firstName: 'Ada "A"', data: { plan: 'pro' } });
      grace = await insertSubscriber(store, scope, { subscriberId: 'grace' });
    });
    afterAll(async () => {
      await database?.close();
    });

    it('keeps every message write in its text, and lists rows without one from their columns', async () => {
      const template = { _id: 'wf', name: 'Welcome', steps: [{ template: { type: 'in_app', body: 'x'.repeat(300) } }] } as unknown as Message['template'];
      const created: Message[] = [];
      for (let i = 0; i < 8; i++) {
        const message = buildMessage(i % 3 === 0 ? grace : ada, {
          channel: i % 4 === 3 ? 'email' : 'in_app',
          createdAt: at(i),
          transactionId: `tx-${i % 2}`,
          template,
          payload: { n: i, text: 'é "q"' },
          cta: i % 2 ? { type: 'redirect', data: { url: 'https://x' } } : {},
          ...(i % 2 ? { contextKeys: ['tenant:acme'] } : {}),
        });
        created.push((await store.messages.create(message)).message);
      }
      const many = [0, 1, 2].map((i) => buildMessage(ada, { createdAt: at(20 + i), transactionId: 'tx-many', template }));
      await store.transaction((transaction) => transaction.messages.createMany(many));
      const legacy = (await plain.messages.create(buildMessage(grace, { createdAt: at(30), transactionId: 'tx-legacy', template }))).message;
      const all = [...created, ...many];
      const texts = await textsOf([...all.map((message) => message._id), legacy._id]);
      expect([...texts.values()].filter((text) => text === null)).toHaveLength(1);
      expect(texts.get(legacy._id)).toBeNull();

      // Every path that writes a message row.
      await store.messages.markAs(scope.environmentId, [created[0]!._id], 'read', at(40));
      await store.messages.markAs(scope.environmentId, [created[1]!._id], 'seen', at(41));
      await store.messages.markAllInAppMessages(scope.environmentId, ada, 'seen', at(42));
      await store.messages.markAs(scope.environmentId, [created[1]!._id], 'unseen', at(43));
      const archived = (await store.messages.get(scope.environmentId, created[2]!._id))!;
      await store.messages.saveInboxState({ ...archived, archived: true, archivedAt: at(44), snoozedUntil: at(99), updatedAt: at(44) });
      const failed = (await store.messages.get(scope.environmentId, created[3]!._id))!;
      await store.messages.save({ ...failed, status: 'error', errorText: 'bounced "hard"', providerStatus: 'bounced', deliveredAt: [at(45)], updatedAt: at(45) });
      await store.messages.softDelete(scope.environmentId, created[4]!._id, at(46));
      // A write by a store without a writer clears the text: it must not stay as it was.
      const elsewhere = (await plain.messages.get(scope.environmentId, created[5]!._id))!;
      await plain.messages.save({ ...elsewhere, status: 'warning', updatedAt: at(47) });
      expect((await textsOf([created[5]!._id])).get(created[5]!._id)).toBeNull();

      for (const filter of [{}, { subscriberId: 'ada' }, { subscriberId: 'grace' }, { channel: 'in_app' as const }, { transactionIds: ['tx-1', 'tx-legacy'] }, { contextKeys: ['tenant:acme'] }, { read: false }]) {
        const { written, expected } = await pages(filter);
        expect(written, JSON.stringify(filter)).toBe(expected);
        expect(JSON.parse(written).data.length, JSON.stringify(filter)).toBeGreaterThan(0);
      }
      for (const page of [0, 1, 2, 3]) {
        const { written, expected } = await pages({}, page, 4);
        expect(written, `page ${page}`).toBe(expected);
      }
      const changed = JSON.parse((await pages({})).written).data as Array<Record<string, unknown>>;
      expect(changed.find((message) => message._id === created[0]!._id)).toMatchObject({ read: true, seen: true, lastReadDate: at(40) });
      expect(changed.find((message) => message._id === created[2]!._id)).toMatchObject({ archived: true, snoozedUntil: at(99) });
      expect(changed.find((message) => message._id === created[3]!._id)).toMatchObject({ status: 'error', errorText: 'bounced "hard"' });
      expect(changed.find((message) => message._id === created[4]!._id)).toBeUndefined();
      expect(changed.find((message) => message._id === created[5]!._id)).toMatchObject({ status: 'warning' });
    });

    it('lists a page through the use case with each message\'s subscriber record, read with the page where the store can', async () => {
      const template = { _id: 'wf', name: 'Welcome', steps: [{ template: { type: 'in_app', body: 'y' } }] } as unknown as Message['template'];
      for (let i = 0; i < 8; i++) await store.messages.create(buildMessage(i % 2 ? grace : ada, { createdAt: at(50 + i), transactionId: 'tx-subs', template }));
      const getMany = vi.spyOn(store.subscribers, 'getMany');
      try {
        const caller = { environmentId: scope.environmentId } as Caller;
        for (const input of [{ subscriberId: 'grace' }, { channel: 'in_app' as const }, { transactionId: ['tx-subs'] }]) {
          const listed = await listMessages({ store } as unknown as Deps, { caller, page: 0, limit: 4, ...input });
          expect(listed.data.length, JSON.stringify(input)).toBeGreaterThan(0);
          for (const message of listed.data) {
            expect(message.subscriber, JSON.stringify(input)).toEqual(message.subscriberRecordId === ada._id ? ada : grace);
          }
        }
        // SQLite reads the subscribers inside the page's block for a filter with a counter scope (the first two);
        // PostgreSQL in the page's statement for one subscriber's page (the first); the others look them up afterwards.
        expect(getMany).toHaveBeenCalledTimes(implementation.name === 'SQLite' ? 1 : 2);
      } finally {
        getMany.mockRestore();
      }
      // A page past the end still has its count (the counter alone).
      const past = await store.messages.listStored(scope.environmentId, { subscriberId: 'grace', page: 50, limit: 4 });
      expect(past).toMatchObject({ data: [], hasMore: false, totalCount: (await store.messages.listStored(scope.environmentId, { subscriberId: 'grace', page: 0, limit: 4 })).totalCount });
      expect(past.totalCount).toBeGreaterThan(0);
    });
  });
}
