import { randomBytes } from 'node:crypto';
import type { Kysely, MigrationProvider } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/domain/ids.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { migrateToLatest, migratorFor } from '../../../src/store/sql/migrate.js';
import { migrationProvider } from '../../../src/store/sql/migrations.js';
import type { Database, MessagesTable } from '../../../src/store/sql/schema.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { buildMessage, insertSubscriber } from '../../helpers/factories.js';
import { openTestPostgres, openTestSqlite, servicesAvailable, type TestSqlDatabase } from '../../helpers/databases.js';

/**
 * Migration 0005 on a database that already holds data: message_counters is backfilled from the non-deleted
 * messages, and notification_topics.created_at from the linked events.
 */
const implementations: Array<{ name: string; available: boolean; open: () => Promise<TestSqlDatabase> }> = [
  { name: 'SQLite', available: true, open: () => openTestSqlite({ migrate: false }) },
  { name: 'PostgreSQL', available: await servicesAvailable(['PostgreSQL']), open: () => openTestPostgres({ migrate: false }) },
];

/** The migrations that shipped before 0005. */
const before0005: MigrationProvider = {
  async getMigrations() {
    const all = await migrationProvider.getMigrations();
    return Object.fromEntries(Object.entries(all).filter(([name]) => name < '0005'));
  },
};

async function migrateTo0004(database: TestSqlDatabase): Promise<void> {
  const { error } = await (await migratorFor(database.db, database.dialect, before0005)).migrateToLatest();
  if (error) throw error;
}

function messageRow(environmentId: string, fields: Pick<MessagesTable, 'channel' | 'external_subscriber_id' | 'context_keys_norm' | 'deleted'>): MessagesTable {
  const at = new Date().toISOString();
  return {
    id: newId(),
    environment_id: environmentId,
    organization_id: newId(),
    notification_id: newId(),
    subscriber_id: newId(),
    template_id: null,
    job_id: newId(),
    transaction_id: `tx-${newId()}`,
    read: 0,
    seen: 0,
    status: 'sent',
    document: '{}',
    created_at: at,
    updated_at: at,
    ...fields,
  };
}

for (const implementation of implementations) {
  describe.skipIf(!implementation.available)(`migration 0005 on ${implementation.name}`, () => {
    let database: TestSqlDatabase;
    const environmentId = newId();
    const otherEnvironmentId = newId();
    const messages = [
      messageRow(environmentId, { channel: 'email', external_subscriber_id: 'a', context_keys_norm: 'tenant:1', deleted: 0 }),
      messageRow(environmentId, { channel: 'email', external_subscriber_id: 'b', context_keys_norm: '', deleted: 0 }),
      messageRow(environmentId, { channel: 'in_app', external_subscriber_id: 'a', context_keys_norm: '', deleted: 0 }),
      messageRow(environmentId, { channel: 'in_app', external_subscriber_id: 'a', context_keys_norm: 'tenant:1', deleted: 1 }),
      messageRow(environmentId, { channel: 'sms', external_subscriber_id: 'b', context_keys_norm: 'region:eu\ntenant:1', deleted: 0 }),
      messageRow(otherEnvironmentId, { channel: 'email', external_subscriber_id: 'a', context_keys_norm: '', deleted: 0 }),
    ];
    const notifications = [
      { id: newId(), created_at: '2026-01-01T00:00:01.000Z' },
      { id: newId(), created_at: '2026-01-01T00:00:03.000Z' },
      { id: newId(), created_at: '2026-01-01T00:00:02.000Z' },
    ];

    beforeAll(async () => {
      database = await implementation.open();
      await migrateTo0004(database);
      await database.db.insertInto('messages').values(messages).execute();
      await database.db
        .insertInto('notifications')
        .values(
          notifications.map(({ id, created_at }) => ({
            id,
            environment_id: environmentId,
            organization_id: newId(),
            subscriber_id: newId(),
            external_subscriber_id: 'a',
            subscriber_email: null,
            template_id: null,
            transaction_id: `tx-${id}`,
            digested_notification_id: null,
            channels_mask: 0,
            severity: null,
            context_keys_norm: '',
            document: '{}',
            created_at,
            updated_at: created_at,
          })),
        )
        .execute();
      // notification_topics as it was before 0005 (no created_at), which the typed schema no longer describes.
      const legacy = database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await legacy
        .insertInto('notification_topics')
        .values(notifications.map(({ id }) => ({ notification_id: id, environment_id: environmentId, topic_id: 'topic-news', topic_key: 'news', subscription_id: null })))
        .execute();
      // Later migrations run after these too; this test is about 0005 onwards.
      expect((await migrateToLatest(database.db, database.dialect)).slice(0, 3)).toEqual(['0005_message_counters_and_topic_order', '0006_accepted_triggers_index', '0007_jobs_found_through_their_event']);
    });
    afterAll(async () => {
      await database?.close();
    });

    it('backfills exact counters from the non-deleted messages, one row per scope', async () => {
      const rows = await database.db.selectFrom('message_counters').selectAll().orderBy('environment_id').orderBy('scope').execute();
      const counts = Object.fromEntries(rows.map((row) => [`${row.environment_id === environmentId ? 'env' : 'other'}|${row.scope}|${row.shard}`, Number(row.count)]));
      expect(counts).toEqual({
        'env|all|0': 4,
        'env|channel:email|0': 2,
        'env|channel:in_app|0': 1,
        'env|channel:sms|0': 1,
        'env|subscriber:a|0': 2,
        'env|subscriber:b|0': 2,
        'env|context:|0': 2,
        'env|context:tenant:1|0': 1,
        'env|context:region:eu\ntenant:1|0': 1,
        'other|all|0': 1,
        'other|channel:email|0': 1,
        'other|subscriber:a|0': 1,
        'other|context:|0': 1,
      });
    });

    it('gives each topic link its event time, and the list pages by it', async () => {
      const links = await database.db.selectFrom('notification_topics').select(['notification_id', 'created_at']).orderBy('created_at').execute();
      expect(links).toEqual(
        [...notifications].sort((x, y) => (x.created_at < y.created_at ? -1 : 1)).map(({ id, created_at }) => ({ notification_id: id, created_at })),
      );
      const store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      const page = await store.notifications.list(environmentId, { topicKey: 'news', page: 0, limit: 2 });
      expect(page.data.map((event) => event._id)).toEqual([notifications[1].id, notifications[2].id]);
      expect(page.hasMore).toBe(true);
    });

    it('keeps counting from the backfilled totals', async () => {
      const store = new SqlStore(database.db, { dialect: database.dialect, secretBox: new SecretBox(randomBytes(32)) });
      const subscriber = await insertSubscriber(store, { environmentId, organizationId: newId() }, { subscriberId: 'a' });
      await store.messages.create(buildMessage(subscriber, { channel: 'email', contextKeys: ['tenant:1'] }));
      expect(await store.messages.softDelete(environmentId, messages[1].id, new Date().toISOString())).toBe(true);
      const total = async (filter: object) => (await store.messages.list(environmentId, { page: 0, limit: 1, ...filter })).totalCount;
      expect(await total({})).toBe(4);
      expect(await total({ channel: 'email' })).toBe(2);
      expect(await total({ subscriberId: 'a' })).toBe(3);
      expect(await total({ subscriberId: 'b' })).toBe(1);
      expect(await total({ contextKeys: ['tenant:1'] })).toBe(2);
      expect(await total({ contextKeys: [] })).toBe(1);
      expect(await total({ channel: 'email', subscriberId: 'a' })).toBe(2);
    });
  });
}
