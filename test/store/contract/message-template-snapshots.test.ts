import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { MESSAGE_TEXT_TEMPLATE } from '../../../src/domain/stored-message.js';
import type { Message, Subscriber } from '../../../src/domain/types.js';
import { messageListText, messageListTextHoldingDocument, serializeMessagePage } from '../../../src/http/message-page-serializer.js';
import type { MessageListFilter } from '../../../src/store/ports.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { migrateToLatest, migratorFor } from '../../../src/store/sql/migrate.js';
import { migrationProvider } from '../../../src/store/sql/migrations.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';
import { buildMessage, createScope, insertSubscriber, type Scope } from '../../helpers/factories.js';
import { messagePageSchemaSerializer } from '../../helpers/message-page.js';

/**
 * Data size (issue 24 point 4): a message keeps a reference to one stored copy of its workflow snapshot
 * (message_templates, migration 0031) instead of the snapshot itself, in its document and in its list text. Messages
 * and `GET /v1/messages` pages read exactly as before, and rows written by the previous code (snapshot inline in the
 * document and the list text, or no list text at all) read as they did, in the same pages.
 */
const implementations = [
  { name: 'SQLite', available: true, open: openTestSqlite },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: openTestPostgres },
];

const COLUMN_FIELDS = new Set([
  '_id', '_environmentId', '_organizationId', '_notificationId', '_subscriberId', '_jobId', '_templateId', 'transactionId',
  'channel', 'read', 'seen', 'status', 'deleted', 'createdAt', 'updatedAt', 'subscriber', 'archived',
]);

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

const workflow = (name: string) =>
  ({
    _id: newId(), name, description: '', active: true, draft: false, critical: false,
    preferenceSettings: { in_app: true, email: true }, tags: ['a "tag"'],
    steps: [{ _id: newId(), name: 'inbox', template: { type: 'in_app', body: `Hello {{subscriber.firstName}} é ${'x'.repeat(400)}` }, filters: [] }],
    triggers: [{ type: 'event', identifier: name, variables: [] }],
  }) as unknown as Message['template'];

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`message workflow snapshots on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    let store: SqlStore;
    let scope: Scope;
    let ada: Subscriber;
    let grace: Subscriber;
    const secretBox = new SecretBox(randomBytes(32));

    async function page(target: SqlStore, filter: Omit<MessageListFilter, 'page' | 'limit'>, limit = 50): Promise<{ written: string; expected: string }> {
      const listed = await target.messages.listStored(scope.environmentId, { ...filter, page: 0, limit });
      for (const message of listed.data) message.subscriber = [ada, grace].find((subscriber) => subscriber._id === message.subscriberRecordId);
      const messages = await target.messages.list(scope.environmentId, { ...filter, page: 0, limit });
      for (const message of messages.data) message.subscriber = [ada, grace].find((subscriber) => subscriber._id === message._subscriberId);
      return { written: serializeMessagePage(listed), expected: messagePageSchemaSerializer(messages) };
    }

    beforeAll(async () => {
      database = await implementation.open({ migrate: false });
      // A database of the previous release: every migration before 0031 (the later ones come with it).
      const previous = { getMigrations: async () => Object.fromEntries(Object.entries(await migrationProvider.getMigrations()).filter(([name]) => name < '0031')) };
      const { error } = await (await migratorFor(database.db, database.dialect, previous)).migrateToLatest();
      if (error) throw error;
      expect((await migrateToLatest(database.db, database.dialect))[0]).toBe('0031_message_templates');
      store = new SqlStore(database.db, { dialect: database.dialect, secretBox, messageText: messageListText, messageTextHoldingDocument: messageListTextHoldingDocument });
      scope = await createScope(store);
      ada = await insertSubscriber(store, scope, { subscriberId: 'ada', firstName: 'Ada' });
      grace = await insertSubscriber(store, scope, { subscriberId: 'grace' });
    });
    afterAll(async () => {
      await database?.close();
    });

    it('stores each snapshot once and reads messages and pages as before, next to rows written by the previous code', async () => {
      const welcome = workflow('welcome');
      const digest = workflow('digest');
      const written: Message[] = [];
      for (let i = 0; i < 6; i++) {
        const message = buildMessage(i % 3 === 0 ? grace : ada, { createdAt: at(i), transactionId: `tx-${i}`, template: i % 2 ? digest : welcome, payload: { template: 'snapshot:not-one', n: i } });
        written.push((await store.messages.create(message)).message);
      }
      const many = [0, 1].map((i) => buildMessage(ada, { createdAt: at(10 + i), template: welcome }));
      await store.transaction((transaction) => transaction.messages.createMany(many));
      // No snapshot: nothing referenced.
      written.push((await store.messages.create(buildMessage(ada, { createdAt: at(12) }))).message);
      // A field the list's schema writes only in part (an undeclared key in cta): the row keeps its document.
      const partial = (await store.messages.create(buildMessage(grace, { createdAt: at(13), template: welcome, cta: { type: 'redirect', data: { url: 'https://x' }, extra: 1 } as Message['cta'] }))).message;
      written.push(partial);
      written.push(...many);

      const snapshots = await database.db.selectFrom('message_templates').select(['id', 'text']).execute();
      expect(snapshots.map((row) => JSON.parse(row.text)).sort((a, b) => a.name.localeCompare(b.name))).toEqual([digest, welcome]);
      const rows = await database.db.selectFrom('messages').select(['id', 'document', 'list_text']).where('environment_id', '=', scope.environmentId).execute();
      for (const row of rows) {
        // The snapshot's text is not in the row; the list text marks where it goes, and holds the document's fields
        // (the document is left empty).
        if (row.id === partial._id) expect(row.document).toContain('"extra":1');
        else expect(row.document).toBe('');
        expect(row.document).not.toContain('Hello {{subscriber.firstName}}');
        expect(row.list_text).not.toContain('Hello {{subscriber.firstName}}');
        expect(row.list_text!.includes(MESSAGE_TEXT_TEMPLATE)).toBe(written.find((message) => message._id === row.id)!.template !== undefined);
      }

      // Every read gives back the message as written, keys in the same order (a fresh store: nothing cached).
      const fresh = new SqlStore(database.db, { dialect: database.dialect, secretBox, messageText: messageListText, messageTextHoldingDocument: messageListTextHoldingDocument });
      const reads = new Map<string, Message>();
      for (const message of written) {
        const read = await fresh.messages.get(scope.environmentId, message._id);
        expect(read).toMatchObject(message);
        reads.set(message._id, read!);
      }
      const before = await page(fresh, {});
      expect(before.written).toBe(before.expected);
      expect(JSON.parse(before.written).data).toHaveLength(written.length);

      // Rows as the previous code wrote them: the snapshot inline in the document and in the list text (two rows),
      // or inline with no list text (one row, as before 0028).
      const texts = new Map(snapshots.map((row) => [row.id, row.text]));
      // The previous code's document: the Message less its column fields, in the Message's key order, snapshot inline.
      const documentOf = (message: Message) => JSON.stringify(Object.fromEntries(Object.entries(message).filter(([key]) => !COLUMN_FIELDS.has(key))));
      for (const [index, message] of [written[0]!, written[1]!, written[2]!].entries()) {
        const row = rows.find((candidate) => candidate.id === message._id)!;
        const document = documentOf(message);
        const listText = index === 2 ? null : row.list_text!.replace(new RegExp(`${MESSAGE_TEXT_TEMPLATE}([0-9a-f]{32})`), (_, id: string) => `,"template":${texts.get(id)}`);
        expect(document).toContain('Hello {{subscriber.firstName}}');
        await database.db.updateTable('messages').set({ document, list_text: listText }).where('id', '=', message._id).execute();
      }
      const old = new SqlStore(database.db, { dialect: database.dialect, secretBox, messageText: messageListText, messageTextHoldingDocument: messageListTextHoldingDocument });
      // The same Messages as from the rows in the new shape.
      for (const message of written) expect(await old.messages.get(scope.environmentId, message._id)).toEqual(reads.get(message._id));
      for (const filter of [{}, { subscriberId: 'ada' }, { subscriberId: 'grace' }, { channel: 'in_app' as const }, { transactionIds: ['tx-0', 'tx-1', 'tx-3'] }]) {
        const mixed = await page(old, filter);
        expect(mixed.written, JSON.stringify(filter)).toBe(mixed.expected);
      }
      expect((await page(old, {})).written).toBe(before.written);
      const inbox = await old.messages.listInbox(scope.environmentId, grace._id, {}, { limit: 10, offset: 0 });
      expect(inbox.data).toEqual(written.filter((message) => message._subscriberId === grace._id).reverse().map((message) => reads.get(message._id)));

      // A write of an old row stores it in the new shape.
      await old.messages.markAs(scope.environmentId, [written[0]!._id], 'read', at(40));
      const rewritten = await database.db.selectFrom('messages').select(['document', 'list_text']).where('id', '=', written[0]!._id).executeTakeFirstOrThrow();
      expect(rewritten.document).toBe('');
      expect(rewritten.list_text).toContain(MESSAGE_TEXT_TEMPLATE);
      const after = await page(fresh, {});
      expect(after.written).toBe(after.expected);
      expect(JSON.parse(after.written).data.find((message: Message) => message._id === written[0]!._id)).toMatchObject({ read: true, lastReadDate: at(40), template: written[0]!.template });
      expect(await database.db.selectFrom('message_templates').select('id').execute()).toHaveLength(2);
    });
  });
}
