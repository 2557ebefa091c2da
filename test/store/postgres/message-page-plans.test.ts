import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Subscriber } from '../../../src/domain/types.js';
import { messageListText, messageListTextHoldingDocument } from '../../../src/http/message-page-serializer.js';
import { preparedName } from '../../../src/store/postgres/prepared-statements.js';
import type { Database } from '../../../src/store/sql/schema.js';
import { migrateToLatest } from '../../../src/store/sql/migrate.js';
import { SecretBox } from '../../../src/store/secret-box.js';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import { createTestSchema, servicesAvailable, type TestSchema } from '../../helpers/databases.js';
import { genericPlanOf, type PlanNode } from '../../helpers/pg-plans.js';
import { buildMessage, buildSubscriber, type Scope } from '../../helpers/factories.js';

/**
 * A page of one subscriber's messages on PostgreSQL is one prepared statement: the page, its count and its
 * subscribers' records (issue 24, session 17). Prepared, PostgreSQL settles on a generic plan after five runs and keeps
 * it (re-planned after 256 runs, see preparedGeneration); made on a fresh schema (tables of a few rows, never
 * analysed) it must still reach the page by messages_env_subscriber_list and each subscriber by its primary key, never
 * by a scan, and it must stay so once the tables have grown.
 */
const available = await servicesAvailable(['PostgreSQL']);

const scans = (nodes: PlanNode[]) => nodes.filter((node) => node['Relation Name'] !== undefined).map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`.trim());

describe.skipIf(!available)('PostgreSQL plans of the subscriber messages page', () => {
  let schema: TestSchema;
  let pool: pg.Pool;
  let db: Kysely<Database>;
  let store: SqlStore;
  let sent: CompiledQuery[] = [];
  const scope: Scope = { environmentId: 'env-page-plans', organizationId: 'org' };
  const subscribers: Subscriber[] = [];

  async function addSubscribers(count: number, messagesEach: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const subscriber = buildSubscriber(scope, { subscriberId: `sub-${subscribers.length}` });
      subscribers.push(subscriber);
      await store.subscribers.create(subscriber);
      await store.messages.createMany(Array.from({ length: messagesEach }, () => buildMessage(subscriber)));
    }
  }

  beforeAll(async () => {
    schema = await createTestSchema();
    pool = new pg.Pool({ connectionString: schema.url, max: 1 });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (event) => void (event.level === 'query' && sent.push(event.query)) });
    await migrateToLatest(db, 'postgres');
    store = new SqlStore(db, { dialect: 'postgres', secretBox: new SecretBox(randomBytes(32)), messageText: messageListText, messageTextHoldingDocument: messageListTextHoldingDocument });
    await addSubscribers(3, 1);
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await schema?.drop();
  });

  async function pageStatement(subscriberId: string): Promise<CompiledQuery> {
    sent = [];
    const page = await store.messages.listStored(scope.environmentId, { subscriberId, page: 0, limit: 10 });
    expect(sent).toHaveLength(1);
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((message) => message.subscriber?.subscriberId === subscriberId)).toBe(true);
    return sent[0]!;
  }


  const expected = ['Index Scan message_counters_pk', 'Index Scan messages_env_subscriber_list', 'Index Scan subscribers_pkey'];

  it('runs prepared, and its generic plan reads by the indexes on tables of a few rows never analysed', async () => {
    const statement = await pageStatement('sub-1');
    expect(preparedName(statement.sql)).toBeDefined();
    expect(scans(await genericPlanOf(pool, statement)).sort()).toEqual(expected);
  });

  it('keeps that plan once the tables have grown', async () => {
    await addSubscribers(200, 12);
    const statement = await pageStatement('sub-150');
    expect(scans(await genericPlanOf(pool, statement)).sort()).toEqual(expected);
  }, 120_000);

  it('sends five columns a row, the subscriber as one value, and gives the record the store reads by id', async () => {
    const subscriber = buildSubscriber(scope, {
      subscriberId: 'sub-record',
      avatar: 'https://example.com/a.png',
      isOnline: true,
      lastOnlineAt: '2026-11-28T09:00:00.000Z',
      __v: 3,
      data: { nested: { list: [1, 'two', null], quote: 'say "hi"\n' }, text: 'Zoë ☃ 𝄞' },
      channels: [{ providerId: 'fcm', credentials: { deviceTokens: ['t1'] } }] as Subscriber['channels'],
    });
    await store.subscribers.create(subscriber);
    await store.messages.createMany(Array.from({ length: 3 }, () => buildMessage(subscriber)));
    const statement = await pageStatement('sub-record');
    const result = await pool.query(statement.sql, [...statement.parameters]);
    // The row description and every row's fields are what herald api decodes per page (issue 24, session 28).
    expect(result.fields.map((field) => field.name)).toEqual(['list_text', 'subscriber_id', 'legacy_id', 'total_count', 'subscriber_record']);
    expect(result.rows.filter((row) => row.subscriber_record !== null)).toHaveLength(1);
    const page = await store.messages.listStored(scope.environmentId, { subscriberId: 'sub-record', page: 0, limit: 10 });
    const [byId] = await store.subscribers.getMany(scope.environmentId, [subscriber._id]);
    expect(byId).toEqual(subscriber);
    for (const message of page.data) expect(message.subscriber).toEqual(byId);
  });

  it('leaves a page with another filter unnamed, without its subscribers', async () => {
    sent = [];
    await store.messages.listStored(scope.environmentId, { subscriberId: 'sub-1', channel: 'in_app', page: 0, limit: 10 });
    const page = sent.filter((query) => /order by/i.test(query.sql));
    expect(page).toHaveLength(1);
    expect(page[0]!.sql).not.toMatch(/subscribers/);
    expect(preparedName(page[0]!.sql)).toBeUndefined();
  });
});
