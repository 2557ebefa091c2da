import { sql, type Compilable, type CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool, type Kysely, type RawBuilder, type Selectable, type SelectQueryBuilder } from 'kysely';
import { normalizeContextKeys } from '../../domain/context-keys.js';
import { hasDocumentConditions, matchesDocumentConditions, tagsColumn, type InboxFilter } from '../../domain/inbox.js';
import type { DeliveryChannel, MarkAs, Message, Page } from '../../domain/types.js';
import {
  MESSAGE_TEXT_TEMPLATE,
  messageOf,
  TEMPLATE_SNAPSHOT_ID_LENGTH,
  TEMPLATE_SNAPSHOT_PREFIX,
  templateSnapshotId,
  type ListedMessage,
  type MessageColumnFields,
  type MessageText,
  type StoredMessage,
} from '../../domain/stored-message.js';
import { TemplateSnapshots } from './template-snapshots.js';
import type { InboxBadgeCounts, InboxCursor, InboxPage, MessageListFilter, MessageRepository } from '../ports.js';
import { fromFlag, toFlag, toJson } from './json.js';
import type { Database, MessageCountersTable, MessagesTable } from './schema.js';
import type { SqlDialectName, SqlStoreOptions } from './sql-store.js';
import { chunks, SUBSCRIBER_COLUMNS, subscribersByIdsStatements, toSubscriber, type SubscriberRow } from './subscriber-repository.js';
import type { Subscriber } from '../../domain/types.js';
import { contextKeysAre, environmentIs, hasContextKeys } from './plan-hints.js';
import { recordEngagement } from './overview-repository.js';
import { oneStatement, type NamedStatement } from './one-statement.js';
import { BACKEND_SHARD_SQL } from './backend-shard.js';
import { ReusableInsert, ReusableQuery } from './reusable-query.js';
import { snapshotReaderOf, type CommitSums, type SnapshotReader } from './snapshot-reads.js';

type MessageRow = Selectable<MessagesTable>;

/**
 * The columns a Message is made from (toMessage). The others are copies of document fields kept for filtering
 * (context keys, snooze, severity, tags) and the external subscriber id; an Inbox page leaves them out, since every
 * value read out of SQLite costs (a page of 11 rows read 22 columns each).
 */
const MESSAGE_DOCUMENT_COLUMNS = [
  'id', 'environment_id', 'organization_id', 'notification_id', 'subscriber_id', 'job_id', 'template_id', 'transaction_id',
  'channel', 'read', 'seen', 'status', 'deleted', 'archived', 'created_at', 'updated_at', 'document', 'list_text',
] as const;
type MessageDocumentRow = Pick<MessageRow, (typeof MESSAGE_DOCUMENT_COLUMNS)[number]>;

/** A list page's columns: those less the two its filter fixes (environment_id, deleted = 0), ~1 µs each per page. */
const MESSAGE_PAGE_COLUMNS = MESSAGE_DOCUMENT_COLUMNS.filter(
  (column): column is Exclude<(typeof MESSAGE_DOCUMENT_COLUMNS)[number], 'environment_id' | 'deleted'> => column !== 'environment_id' && column !== 'deleted',
);
/** Rows per multi-row INSERT: 18 columns each stays well under the databases' bound-parameter limits. */
const INSERT_BATCH = 200;

/** Message fields held in columns; everything else lives in the JSON document. */
const COLUMN_FIELDS = [
  '_id', '_environmentId', '_organizationId', '_notificationId', '_subscriberId', '_jobId', '_templateId',
  'transactionId', 'channel', 'read', 'seen', 'status', 'deleted', 'createdAt', 'updatedAt', 'subscriber', 'archived',
] as const;

/** Rows read per round when a `data` filter (checked here, not in SQL) thins a page out. */
const INBOX_SCAN_BATCH = 200;

/** The columns message_counters scopes are made of (plus the id, which picks the shard). */
const COUNTED_COLUMNS = ['id', 'environment_id', 'channel', 'external_subscriber_id', 'context_keys_norm'] as const;

type CountedMessage = Pick<MessageRow, (typeof COUNTED_COLUMNS)[number]>;

/**
 * Counter rows per scope on PostgreSQL, so concurrent workers do not queue on one row lock (SQLite has one writer):
 * the shards of a message's hash. A new message's environment-wide scopes go to its connection's shard instead
 * (BACKEND_SHARD_SQL, see countedInsertStatementsPg); readers sum every shard of a scope, whatever its number.
 */
const POSTGRES_COUNTER_SHARDS = 8;

/**
 * Writes keep message_counters exact in the transaction of the message write: the caller's, or one of their own.
 * On SQLite that costs a savepoint inside the shared group commit (one commit to wait for, as before; two separate
 * statements outside a transaction would each wait for their own commit and could be split by a crash).
 */
export class SqlMessageRepository implements MessageRepository {
  private readonly snapshots: TemplateSnapshots;
  /** SQLite outside a transaction: reads that see one state together (listStored's page). */
  private readonly reader: SnapshotReader | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {
    this.snapshots = options.templateSnapshots ?? new TemplateSnapshots();
    this.reader = options.dialect === 'sqlite' ? snapshotReaderOf(db) : undefined;
  }

  async create(message: Message): Promise<{ message: Message; created: boolean }> {
    const externalSubscriberId = message.subscriber?.subscriberId ?? (await this.externalSubscriberId(message));
    const row = this.toRow(message, externalSubscriberId);
    await this.saveSnapshots([row]);
    const created =
      this.options.dialect === 'postgres' && row.deleted === 0
        ? await this.insertCountedAsOneStatement(row)
        : (await this.withTransaction((db) => this.insertCounted(db, [row]))).length > 0;
    if (created || !message._jobId) return { message, created: true };
    const existing = await this.findByJobId(message._environmentId, message._jobId);
    if (!existing) throw new Error(`message for job ${message._jobId} conflicted but cannot be read`);
    return { message: existing, created: false };
  }

  async createMany(messages: Message[]): Promise<void> {
    const unknown = messages.filter((m) => !m.subscriber).map((m) => m._subscriberId);
    const externalIds = new Map<string, string>();
    for (const chunk of chunks([...new Set(unknown)], 500)) {
      const rows = await this.db.selectFrom('subscribers').select(['id', 'subscriber_id']).where('id', 'in', chunk).execute();
      for (const row of rows) externalIds.set(row.id, row.subscriber_id);
    }
    const rows = messages.map((message) => {
      const externalId = message.subscriber?.subscriberId ?? externalIds.get(message._subscriberId);
      if (externalId === undefined) throw new Error(`message ${message._id}: subscriber ${message._subscriberId} does not exist`);
      return this.toRow(message, externalId);
    });
    await this.saveSnapshots(rows);
    await this.withTransaction((db) => this.insertCounted(db, rows));
  }

  async get(environmentId: string, id: string): Promise<Message | undefined> {
    const [row] = (await messageById.execute(this.db, this.options.dialect, { environmentId, id })).rows;
    return row && (await this.messagesOf([row]))[0];
  }

  /** Deleted messages included: a deleted message must not be produced again by a rerun of its step. */
  async findByJobId(environmentId: string, jobId: string): Promise<Message | undefined> {
    const [row] = (await messageByJobId.execute(this.db, this.options.dialect, { environmentId, jobId })).rows;
    return row && (await this.messagesOf([row]))[0];
  }

  async findByIdentifier(environmentId: string, identifiers: string[]): Promise<Message | undefined> {
    if (identifiers.length === 0) return undefined;
    const rows = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('provider_message_id', 'in', identifiers.slice(0, 10))
      .where('deleted', '=', 0)
      .execute();
    const byIdentifier = new Map(rows.map((row) => [row.provider_message_id, row]));
    const row = identifiers.map((identifier) => byIdentifier.get(identifier)).find((found) => found !== undefined);
    return row && (await this.messagesOf([row]))[0];
  }

  async list(environmentId: string, filter: MessageListFilter): Promise<Page<Message>> {
    const { rows, ...page } = await this.page(environmentId, filter, messagePage);
    return { ...page, data: await this.messagesOf(rows.map((row) => toStored(row, environmentId, 0))) };
  }

  /**
   * The page as its list texts (migration 0028): one value per message and its subscriber's id, instead of fifteen
   * columns. Messages without a text (written before 0028, or by a store without a writer) are read by id from their
   * columns, in a second statement that only such pages make.
   *
   * Two ways to read, the same statements: on SQLite outside a transaction, for a filter with a counter scope (the
   * SDKs' and bench:http's lists), storedPageTogether runs them as one synchronous block, without the promise per
   * statement of Kysely's round (the embedded page's cost) and of one state of the data. Every other page (PostgreSQL,
   * whose reads are round trips; SQLite in a transaction or with a filter only a count answers; a page holding a
   * message without a text) goes through `page` below, one awaited statement at a time. Both make their messages with
   * listedOfRows.
   */
  async listStored(environmentId: string, filter: MessageListFilter): Promise<Page<ListedMessage>> {
    const scope = counterScopeOf(filter);
    if (this.reader !== undefined && scope !== undefined) {
      const together = await this.reader.readTogether((read) => this.storedPageTogether(read, environmentId, filter, scope));
      if (together !== undefined) return together;
    }
    const fold = this.options.dialect === 'postgres' && isSubscriberPage(filter);
    const { rows, subscriberRows, ...page } = await this.page(environmentId, filter, messageTextPage, fold ? messageTextPageWithSubscribers : undefined);
    const { data, snapshotIds, legacy } = listedOfRows(rows);
    if (snapshotIds !== undefined) putTemplates(snapshotIds, await this.snapshots.load(this.db, snapshotIds.values()));
    if (subscriberRows !== undefined) putSubscribers(data, new Map(subscriberRows.map((row) => [row.id, toSubscriber(row)])));
    if (legacy === undefined) return { ...page, data };
    // By the primary key: the environment checked on the rows found (see environmentIs; without it SQLite read every
    // message of the environment through an environment index, 200 ms at 1M).
    const found = await this.db.selectFrom('messages').select(MESSAGE_PAGE_COLUMNS).where(environmentIs(environmentId)).where('id', 'in', [...legacy.keys()]).execute();
    const stored = await this.withSnapshots(found.map((row) => toStored(row, environmentId, 0)));
    for (const message of stored) legacy.get(message.columns._id)!.stored = message;
    // A message deleted (or its environment's data swept) between the two statements is left out of the page.
    return { ...page, data: data.filter((listed) => listed.text !== undefined || listed.stored !== undefined) };
  }

  /**
   * A list page's rows (at most `limit`) in the columns of `query`, with hasMore and totalCount. With a counter scope
   * (every filter but transaction ids, read and seen), the page's statement also reads the counter, as a scalar
   * subquery evaluated once (SQLite and PostgreSQL alike): one statement per page instead of two, on PostgreSQL one
   * round trip fewer. A page past the end has no row to carry it, so the counter is then read alone.
   */
  private async page<R extends object>(
    environmentId: string,
    filter: MessageListFilter,
    query: MessagePageQuery<R>,
    withSubscribers?: ReusableQuery<MessagePageParams>,
  ): Promise<Omit<Page<unknown>, 'data'> & { rows: R[]; subscriberRows?: SubscriberRow[] }> {
    const where = (eb: ExpressionBuilder<Database, 'messages'>) => {
      const conditions: Expression<SqlBool>[] = [eb('environment_id', '=', environmentId), eb('deleted', '=', 0)];
      if (filter.channel !== undefined) conditions.push(eb('channel', '=', filter.channel));
      if (filter.subscriberId !== undefined) conditions.push(eb('external_subscriber_id', '=', filter.subscriberId));
      if (filter.transactionIds !== undefined && filter.transactionIds.length > 0) {
        conditions.push(eb('transaction_id', 'in', filter.transactionIds));
      }
      if (filter.contextKeys !== undefined) conditions.push(contextKeysAre('context_keys_norm', normalizeContextKeys(filter.contextKeys)));
      if (filter.read !== undefined) conditions.push(eb('read', '=', toFlag(filter.read)));
      if (filter.seen !== undefined) conditions.push(eb('seen', '=', toFlag(filter.seen)));
      return eb.and(conditions);
    };
    const scope = counterScopeOf(filter);
    const byStatement = filter.transactionIds === undefined || filter.transactionIds.length === 0;
    const statement = byStatement && withSubscribers !== undefined ? withSubscribers : query.statement;
    let rows = (
      filter.transactionIds !== undefined && filter.transactionIds.length > 0
        ? await query
            .select(this.db.selectFrom('messages'))
            .where(where)
            .orderBy('created_at', 'desc')
            .orderBy('id', 'desc')
            .limit(filter.limit + 1)
            .offset(filter.page * filter.limit)
            .execute()
        : (await statement.execute(this.db, this.options.dialect, pageParams(environmentId, filter, scope))).rows
    ) as Array<R & { total_count?: number | string | null }>;
    // withSubscribers' rows: the page's, then its subscribers' records (`subscriber_record`, null on the page's rows).
    let subscriberRows: SubscriberRow[] | undefined;
    if (statement === withSubscribers) {
      const all = rows as unknown as Array<Record<string, unknown>>;
      const first = all.findIndex((row) => row.subscriber_record !== null && row.subscriber_record !== undefined);
      rows = (first < 0 ? all : all.slice(0, first)) as typeof rows;
      subscriberRows = (first < 0 ? [] : all.slice(first)).map(subscriberRowOf);
    }
    const count =
      scope === undefined
        ? await this.db.selectFrom('messages').select((eb) => eb.fn.countAll<number | string>().as('n')).where(where).executeTakeFirstOrThrow()
        : rows.length > 0
          ? { n: rows[0]!.total_count }
          : ((await messageCounter.execute(this.db, this.options.dialect, { environmentId, scope })).rows[0] as { n: number | string | null } | undefined) ?? { n: 0 };
    return {
      rows: rows.length > filter.limit ? rows.slice(0, filter.limit) : rows,
      page: filter.page,
      pageSize: filter.limit,
      hasMore: rows.length > filter.limit,
      totalCount: Number(count.n ?? 0),
      subscriberRows,
    };
  }

  async findInAppForSubscriber(environmentId: string, subscriberInternalId: string, ids: string[]): Promise<Message[]> {
    const found: Message[] = [];
    for (const chunk of chunks([...new Set(ids)], 500)) {
      const rows = await this.db
        .selectFrom('messages')
        .selectAll()
        .where('id', 'in', chunk)
        .where(environmentIs(environmentId))
        .where('subscriber_id', '=', subscriberInternalId)
        .where('channel', '=', 'in_app')
        .where('deleted', '=', 0)
        .execute();
      found.push(...(await this.messagesOf(rows)));
    }
    return found;
  }

  /** Read-modify-write per message (the dates live in the document); call it inside a transaction. */
  async markAs(environmentId: string, ids: string[], markAs: MarkAs, at: string): Promise<Message[]> {
    const updated = new Map<string, Message>();
    for (const chunk of chunks([...new Set(ids)], 500)) {
      const rows = await this.db
        .selectFrom('messages')
        .selectAll()
        .where('id', 'in', chunk)
        .where(environmentIs(environmentId))
        .where('deleted', '=', 0)
        .execute();
      for (const read of await this.messagesOf(rows)) {
        const message = applyMarkAs(read, markAs, at);
        if (await this.saveReadState(message)) updated.set(message._id, message);
      }
    }
    return ids.flatMap((id) => (updated.has(id) ? [updated.get(id)!] : []));
  }

  /**
   * May change what message_counters count (deleted, channel, context keys): the update applies only while those
   * columns still hold what was read, so the counters move from exactly the state it replaced.
   */
  async save(message: Message): Promise<void> {
    const row = this.toRow(message, '');
    await this.saveSnapshots([row]);
    await this.withTransaction(async (db) => {
      for (;;) {
        const previous = await db
          .selectFrom('messages')
          .select([...COUNTED_COLUMNS, 'deleted'])
          .where('environment_id', '=', message._environmentId)
          .where('id', '=', message._id)
          .executeTakeFirst();
        if (!previous) return;
        const result = await db
          .updateTable('messages')
          .set({
            read: row.read,
            seen: row.seen,
            status: row.status,
            channel: row.channel,
            context_keys_norm: row.context_keys_norm,
            deleted: row.deleted,
            document: row.document,
            list_text: row.list_text,
            updated_at: row.updated_at,
            // A retried send has the new vendor id; reports name the message by it.
            ...(row.provider_message_id ? { provider_message_id: row.provider_message_id } : {}),
          })
          .where('environment_id', '=', message._environmentId)
          .where('id', '=', message._id)
          .where('channel', '=', previous.channel)
          .where('context_keys_norm', '=', previous.context_keys_norm)
          .where('deleted', '=', previous.deleted)
          .executeTakeFirst();
        // A concurrent writer changed a counted column in between (PostgreSQL): read it again.
        if (Number(result.numUpdatedRows) === 0) continue;
        const deltas = new MessageCounterDeltas(this.options.dialect);
        if (previous.deleted === 0) deltas.add(previous, -1);
        if (row.deleted === 0) deltas.add({ ...previous, channel: row.channel, context_keys_norm: row.context_keys_norm }, 1);
        await deltas.apply(db);
        return;
      }
    });
  }

  async softDelete(environmentId: string, id: string, at: string): Promise<boolean> {
    return this.withTransaction(async (db) => {
      const deleted = await db
        .updateTable('messages')
        .set({ deleted: 1, updated_at: at })
        .where('environment_id', '=', environmentId)
        .where('id', '=', id)
        .where('deleted', '=', 0)
        .returning(COUNTED_COLUMNS)
        .executeTakeFirst();
      if (!deleted) return false;
      const deltas = new MessageCounterDeltas(this.options.dialect);
      deltas.add(deleted, -1);
      await deltas.apply(db);
      return true;
    });
  }

  /** One grouped count over the Inbox index: unread, not archived, not snoozed, by severity; and how many are unseen. */
  async countInboxBadges(environmentId: string, subscriberRecordId: string, _at: string): Promise<InboxBadgeCounts> {
    const rows = await this.db
      .selectFrom('messages')
      .select((eb) => ['severity', eb.fn.countAll<number | string>().as('unread'), eb.fn.sum<number | string | null>('seen').as('seen')])
      .where('environment_id', '=', environmentId)
      .where('subscriber_id', '=', subscriberRecordId)
      .where('channel', '=', 'in_app')
      .where('deleted', '=', 0)
      .where('read', '=', 0)
      .where('archived', '=', 0)
      .where('snoozed_until', 'is', null)
      .groupBy('severity')
      .execute();
    const severity = { high: 0, medium: 0, low: 0, none: 0 };
    let total = 0;
    let unseen = 0;
    for (const row of rows) {
      const count = Number(row.unread);
      const level = (row.severity ?? 'none') as keyof typeof severity;
      severity[level in severity ? level : 'none'] += count;
      total += count;
      unseen += count - Number(row.seen ?? 0);
    }
    return { unread: { total, severity }, unseen };
  }

  async markAllInApp(environmentId: string, subscriber: { _id: string; subscriberId: string }, markAs: MarkAs, at: string): Promise<number> {
    return (await this.markAllInAppMessages(environmentId, subscriber, markAs, at)).length;
  }

  async markAllInAppMessages(environmentId: string, subscriber: { _id: string; subscriberId: string }, markAs: MarkAs, at: string): Promise<Message[]> {
    const rows = await this.db
      .selectFrom('messages')
      .select('id')
      .where('environment_id', '=', environmentId)
      .where('external_subscriber_id', '=', subscriber.subscriberId)
      .where('deleted', '=', 0)
      .where('subscriber_id', '=', subscriber._id)
      .where('channel', '=', 'in_app')
      .where((eb) => {
        // Only the messages the mark changes: `read` also sets seen, so it changes a message lacking either.
        if (markAs === 'read') return eb.or([eb('read', '=', 0), eb('seen', '=', 0)]);
        if (markAs === 'seen') return eb('seen', '=', 0);
        if (markAs === 'unread') return eb('read', '=', 1);
        return eb('seen', '=', 1);
      })
      .execute();
    return this.markAs(environmentId, rows.map((row) => row.id), markAs, at);
  }

  async softDeleteByTransaction(
    environmentId: string,
    transactionId: string,
    channel: DeliveryChannel | undefined,
    at: string,
  ): Promise<Array<{ _id: string; _subscriberId: string; channel: DeliveryChannel }>> {
    let query = this.db
      .selectFrom('messages')
      .select(['id', 'subscriber_id', 'channel'])
      .where('environment_id', '=', environmentId)
      .where('transaction_id', '=', transactionId)
      .where('deleted', '=', 0);
    if (channel !== undefined) query = query.where('channel', '=', channel);
    const deleted: Array<{ _id: string; _subscriberId: string; channel: DeliveryChannel }> = [];
    for (const row of await query.orderBy('id').execute()) {
      if (await this.softDelete(environmentId, row.id, at)) {
        deleted.push({ _id: row.id, _subscriberId: row.subscriber_id, channel: row.channel as DeliveryChannel });
      }
    }
    return deleted;
  }

  async listInbox(environmentId: string, subscriberRecordId: string, filter: InboxFilter, page: InboxPage): Promise<{ data: Message[]; hasMore: boolean }> {
    if (!hasDocumentConditions(filter)) {
      const rows = await this.inboxRows(environmentId, subscriberRecordId, filter, page.after, page.limit + 1, page.offset);
      return { data: await this.messagesOf(rows.slice(0, page.limit)), hasMore: rows.length > page.limit };
    }
    // The data, feed and payload filters are checked on the documents: scan in batches until the page (and one more) is found.
    const wanted = page.offset + page.limit + 1;
    const found: Message[] = [];
    for await (const message of this.scanInbox(environmentId, subscriberRecordId, filter, page.after)) {
      found.push(message);
      if (found.length >= wanted) break;
    }
    const data = found.slice(page.offset, page.offset + page.limit);
    return { data, hasMore: found.length > page.offset + page.limit };
  }

  /**
   * The filters without a `data` condition are counted in one statement, one conditional sum each over the
   * subscriber's in-app messages (the `<Inbox />` bell sends four, one per severity: one index range read once,
   * not four times); a `data` filter is checked on the documents, by a scan of its own.
   */
  async countInbox(environmentId: string, subscriberRecordId: string, filters: InboxFilter[]): Promise<number[]> {
    const counts = new Array<number>(filters.length).fill(0);
    const inSql = filters.map((filter, index) => ({ filter, index })).filter(({ filter }) => !hasDocumentConditions(filter));
    if (inSql.length > 0) {
      const params: Record<string, unknown> = { environmentId, subscriberRecordId };
      const shapes = inSql.map(({ filter }, position) => inboxShape(filter, `f${position}_`, params));
      const statement = cachedInboxStatement(`count|${shapes.map((shape) => shape.key).join('|')}`, (db, p) =>
        db
          .selectFrom('messages')
          .select((eb) =>
            shapes.map((shape, position) => {
              const conditions = inboxConditions(eb, shape, p);
              // A filter without conditions counts every row; sum() of no rows is NULL, read as 0 below.
              return (conditions.length ? sql<number | string | null>`sum(case when ${eb.and(conditions)} then 1 else 0 end)` : sql<number | string>`count(*)`).as(`c${position}`);
            }),
          )
          .where((eb) => eb.and(inboxScope(eb, p))),
      );
      const [row] = (await statement.execute(this.db, this.options.dialect, params)).rows as Array<Record<string, number | string | null>>;
      inSql.forEach(({ index }, position) => (counts[index] = Number(row?.[`c${position}`] ?? 0)));
    }
    for (const [index, filter] of filters.entries()) {
      if (!hasDocumentConditions(filter)) continue;
      for await (const _ of this.scanInbox(environmentId, subscriberRecordId, filter, undefined)) counts[index]++;
    }
    return counts;
  }

  async findInboxPosition(environmentId: string, subscriberRecordId: string, id: string): Promise<InboxCursor | undefined> {
    const [row] = (await inboxPosition.execute(this.db, this.options.dialect, { environmentId, subscriberRecordId, id })).rows;
    return row && { createdAt: row.created_at, id: row.id };
  }

  async saveInboxState(message: Message): Promise<boolean> {
    const row = this.toRow(message, '');
    await this.saveSnapshots([row]);
    return this.saveCountingEngagement(message, { read: row.read, seen: row.seen, archived: row.archived, snoozed_until: row.snoozed_until, document: row.document, list_text: row.list_text, updated_at: row.updated_at });
  }

  /** The subscriber's matching non-deleted in-app rows, newest first, after the cursor; the data filter is not applied. */
  private async inboxRows(
    environmentId: string,
    subscriberRecordId: string,
    filter: InboxFilter,
    after: InboxCursor | undefined,
    limit: number,
    offset: number,
  ): Promise<MessageDocumentRow[]> {
    const params: Record<string, unknown> = { environmentId, subscriberRecordId, limit, offset };
    const shape = inboxShape(filter, '', params);
    if (after) {
      params.afterCreatedAt = after.createdAt;
      params.afterId = after.id;
    }
    const statement = cachedInboxStatement(`list|${shape.key}|${after ? 'after' : ''}`, (db, p) =>
      db
        .selectFrom('messages')
        .select(MESSAGE_DOCUMENT_COLUMNS)
        .where((eb) => {
          const conditions = [...inboxScope(eb, p), ...inboxConditions(eb, shape, p)];
          if (after) {
            conditions.push(
              eb.or([eb('created_at', '<', p.afterCreatedAt as string), eb.and([eb('created_at', '=', p.afterCreatedAt as string), eb('id', '<', p.afterId as string)])]),
            );
          }
          return eb.and(conditions);
        })
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(p.limit as number)
        .offset(p.offset as number),
    );
    return (await statement.execute(this.db, this.options.dialect, params)).rows as MessageDocumentRow[];
  }

  private async *scanInbox(environmentId: string, subscriberRecordId: string, filter: InboxFilter, after: InboxCursor | undefined): AsyncGenerator<Message> {
    let cursor = after;
    for (;;) {
      const rows = await this.inboxRows(environmentId, subscriberRecordId, filter, cursor, INBOX_SCAN_BATCH, 0);
      for (const message of await this.messagesOf(rows)) {
        if (matchesDocumentConditions(message, filter)) yield message;
      }
      if (rows.length < INBOX_SCAN_BATCH) return;
      const last = rows[rows.length - 1];
      cursor = { createdAt: last.created_at, id: last.id };
    }
  }

  /** Mark-as changes only flags and dates, none of the counted columns; a message deleted meanwhile is left alone. */
  private async saveReadState(message: Message): Promise<boolean> {
    const row = this.toRow(message, '');
    await this.saveSnapshots([row]);
    return this.saveCountingEngagement(message, { read: row.read, seen: row.seen, document: row.document, list_text: row.list_text, updated_at: row.updated_at });
  }

  /**
   * Writes a non-deleted message's Inbox columns. For an in-app message, `read` and `seen` first flip on their own,
   * guarded by their previous value, so the overview's read and seen counts (migration 0024) move exactly once per
   * change, in the same transaction.
   */
  private async saveCountingEngagement(message: Message, changes: Partial<MessageRow>): Promise<boolean> {
    const update = (db: Kysely<Database>) =>
      db.updateTable('messages').set(changes).where('environment_id', '=', message._environmentId).where('id', '=', message._id).where('deleted', '=', 0).executeTakeFirst();
    if (message.channel !== 'in_app') return Number((await update(this.db)).numUpdatedRows) > 0;
    return this.withTransaction(async (db) => {
      for (const what of ['read', 'seen'] as const) {
        const value = message[what] ? 1 : 0;
        const flipped = await db
          .updateTable('messages')
          .set({ [what]: value })
          .where('environment_id', '=', message._environmentId)
          .where('id', '=', message._id)
          .where('deleted', '=', 0)
          .where(what, '<>', value)
          .returning(['created_at', 'template_id'])
          .executeTakeFirst();
        if (flipped) {
          await recordEngagement(db, this.options.dialect, {
            messageId: message._id,
            environmentId: message._environmentId,
            workflowId: flipped.template_id ?? '',
            createdAt: flipped.created_at,
            what,
            delta: value ? 1 : -1,
          });
        }
      }
      return Number((await update(db)).numUpdatedRows) > 0;
    });
  }

  /**
   * Inserts the rows (a row whose job already has a message is skipped) and counts the ones actually inserted:
   * RETURNING tells an insert from a skipped rerun of the same job, which must not count again.
   */
  private async insertCounted(db: Kysely<Database>, rows: MessageRow[]): Promise<MessageRow[]> {
    const inserted: MessageRow[] = [];
    for (const batch of chunks(rows, INSERT_BATCH)) {
      const insertedIds = (await insertMessages.execute(db, this.options.dialect, batch)).rows as Array<{ id: string }>;
      const ids = new Set(insertedIds.map((r) => r.id));
      inserted.push(...batch.filter((row) => ids.has(row.id)));
    }
    const deltas = new MessageCounterDeltas(this.options.dialect);
    for (const row of inserted) if (row.deleted === 0) deltas.add(row, 1);
    await deltas.apply(db);
    return inserted;
  }

  /**
   * PostgreSQL: insertCounted for one message as one statement (one round trip, no BEGIN/COMMIT): the insert is a CTE
   * and the counter upsert reads its RETURNING rows, so a rerun whose insert is skipped changes no counter.
   * True when the message was inserted.
   */
  private async insertCountedAsOneStatement(row: MessageRow): Promise<boolean> {
    const { inserted, counters } = this.countedInsertStatementsPg(row);
    const result = await this.db.executeQuery(oneStatement([inserted], counters));
    return Number(result.numAffectedRows ?? 0) > 0;
  }

  /**
   * A new message's insert (named `inserted`, nothing when the job has its message) and its counters, which count only
   * when `inserted` has a row. PostgreSQL: an upsert that reads `inserted`, combined with it by `oneStatement`.
   * SQLite: the counter rows, added at the commit (counterSums) when the insert returned its row (see HeldWrites), so
   * no upsert is compiled per message there.
   */
  async createStatements(message: Message): Promise<CountedInsert> {
    const externalSubscriberId = message.subscriber?.subscriberId ?? (await this.externalSubscriberId(message));
    const row = this.toRow(message, externalSubscriberId);
    // Written now, before the held statements that reference it (once per snapshot and process).
    await this.saveSnapshots([row]);
    if (this.options.dialect === 'postgres') return this.countedInsertStatementsPg(row);
    const deltas = new MessageCounterDeltas(this.options.dialect);
    deltas.add(row, 1);
    return { inserted: insertedStatement(this.db, this.options.dialect, row), counterRows: deltas.take() };
  }

  /**
   * SQLite: message_counters rows added to by the blocks of one commit (the rows of createStatements' counterRows),
   * summed and written at the commit (see CommitSums). The "all", channel and context rows are the same for most
   * messages, so a commit of several deliveries updates each once.
   */
  readonly counterSums: CommitSums<MessageCountersTable> = {
    write: (rows) => {
      const summed = rows.map(({ row, count }) => ({ ...row, count })).sort(compareCounterRows);
      return [...chunks(summed, INSERT_BATCH)].map((batch) => upsertCounters.compile(this.db, this.options.dialect, batch));
    },
  };

  /** PostgreSQL: a new message's insert and the upsert of its counters that reads it (see upsertCountersIfInserted). */
  private countedInsertStatementsPg(row: MessageRow): { inserted: NamedStatement; counters: CompiledQuery<unknown> } {
    const deltas = new MessageCounterDeltas(this.options.dialect);
    deltas.add(row, 1);
    const inserted = insertedStatement(this.db, this.options.dialect, row);
    const counters: Record<string, unknown> = {};
    deltas.take().forEach((counter, index) => {
      counters[`environment${index}`] = counter.environment_id;
      counters[`scope${index}`] = counter.scope;
      // The environment-wide scopes, which every concurrent write adds to, on the connection's shard; a subscriber's
      // scope (rarely written twice at once) keeps the message's hash shard, so it spreads over 8 rows at most.
      if (isSubscriberScope(counter.scope)) counters[`shard${index}`] = counter.shard;
      counters[`count${index}`] = counter.count;
    });
    return { inserted, counters: upsertCountersIfInserted.compile(this.db, this.options.dialect, counters) };
  }

  /** Runs `work` in the caller's transaction, or in a new one, so a message write and its counter updates commit together. */
  /** The row of a message write; every write of a message row rewrites its list text (or clears it, without a writer). */
  private toRow(message: Message, externalSubscriberId: string): MessageRow {
    return toRow(message, externalSubscriberId, this.options, this.snapshots);
  }

  /** The snapshots the rows reference, written before the rows (see TemplateSnapshots.save). */
  private async saveSnapshots(rows: MessageRow[]): Promise<void> {
    const ids: string[] = [];
    for (const row of rows) {
      const id = rowSnapshots.get(row);
      if (id !== undefined) ids.push(id);
    }
    if (ids.length > 0) await this.snapshots.save(this.db, ids);
  }

  /**
   * listStored on SQLite outside a transaction, for a filter with a counter scope (every filter the SDKs and bench:http
   * send): the page with its counter, the counter alone past the end, the snapshots not in memory and the page's
   * subscribers, as one synchronous block (SnapshotReader). The same statements as before, without a Kysely round
   * (connection, executor, driver: a promise each) per statement, and of one state of the data; each message comes
   * with its subscriber record, so the use case does not look them up. `undefined` when a row has no list text
   * (written before 0028): listStored then reads the page as before.
   */
  private storedPageTogether(
    read: <T>(query: CompiledQuery<T>) => T[],
    environmentId: string,
    filter: MessageListFilter,
    scope: string,
  ): Page<ListedMessage> | undefined {
    const query = messageTextPage.statement.compile(this.db, 'sqlite', pageParams(environmentId, filter, scope));
    const rows = read(query) as Array<TextPageRow & { total_count?: number | string | null }>;
    let total: number | string | null | undefined;
    if (rows.length > 0) total = rows[0]!.total_count;
    else total = (read(messageCounter.compile(this.db, 'sqlite', { environmentId, scope })) as Array<{ n: number | string | null }>)[0]?.n;
    const { data, snapshotIds, legacy } = listedOfRows(rows.length > filter.limit ? rows.slice(0, filter.limit) : rows);
    if (legacy !== undefined) return undefined;
    if (snapshotIds !== undefined) putTemplates(snapshotIds, this.snapshots.loadTogether(this.db, snapshotIds.values(), read));
    const subscriberIds: string[] = [];
    for (const listed of data) if (!subscriberIds.includes(listed.subscriberRecordId)) subscriberIds.push(listed.subscriberRecordId);
    if (subscriberIds.length > 0) {
      const byId = new Map<string, Subscriber>();
      for (const statement of subscribersByIdsStatements(this.db, 'sqlite', environmentId, subscriberIds)) {
        for (const row of read(statement) as SubscriberRow[]) byId.set(row.id, toSubscriber(row));
      }
      putSubscribers(data, byId);
    }
    return { data, page: filter.page, pageSize: filter.limit, hasMore: rows.length > filter.limit, totalCount: Number(total ?? 0) };
  }

  /** Messages of stored rows, each referenced workflow snapshot read (from memory, or in one statement) and put in. */
  private async messagesOf(rows: Array<MessageDocumentRow | StoredMessage>): Promise<Message[]> {
    const messages = rows.map((row) => ('columns' in row ? messageOf(row) : toMessage(row)));
    const ids = new Map<Message, string>();
    for (const message of messages) {
      const id = templateSnapshotId(message.template);
      if (id !== undefined) ids.set(message, id);
    }
    if (ids.size === 0) return messages;
    const texts = await this.snapshots.load(this.db, ids.values());
    for (const [message, id] of ids) message.template = JSON.parse(snapshotText(texts, id));
    return messages;
  }

  /** Stored messages with the texts of the snapshots their documents reference (the list's rows without a text). */
  private async withSnapshots(stored: StoredMessage[]): Promise<StoredMessage[]> {
    const ids = new Map<StoredMessage, string>();
    for (const message of stored) {
      if (!message.document?.includes(`"${TEMPLATE_SNAPSHOT_PREFIX}`)) continue;
      const id = templateSnapshotId((JSON.parse(message.document) as { template?: unknown }).template);
      if (id !== undefined) ids.set(message, id);
    }
    if (ids.size === 0) return stored;
    const texts = await this.snapshots.load(this.db, ids.values());
    for (const [message, id] of ids) message.template = snapshotText(texts, id);
    return stored;
  }

  private withTransaction<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.isTransaction ? work(this.db) : this.db.transaction().execute(work);
  }

  private async externalSubscriberId(message: Message): Promise<string> {
    const row = await this.db
      .selectFrom('subscribers')
      .select('subscriber_id')
      .where('environment_id', '=', message._environmentId)
      .where('id', '=', message._subscriberId)
      .executeTakeFirst();
    if (!row) throw new Error(`message ${message._id}: subscriber ${message._subscriberId} does not exist`);
    return row.subscriber_id;
  }
}

const COUNTER_SCOPE_ALL = 'all';
const channelScope = (channel: string) => `channel:${channel}`;
const subscriberScope = (externalSubscriberId: string) => `subscriber:${externalSubscriberId}`;
const isSubscriberScope = (scope: string) => scope.startsWith('subscriber:');
const contextScope = (contextKeysNorm: string) => `context:${contextKeysNorm}`;

/** The message_counters scopes of one message (migration 0005 backfills the same); a non-deleted message counts once in each. */
function messageCounterScopes(message: Pick<MessageRow, 'channel' | 'external_subscriber_id' | 'context_keys_norm'>): string[] {
  return [COUNTER_SCOPE_ALL, channelScope(message.channel), subscriberScope(message.external_subscriber_id), contextScope(message.context_keys_norm)];
}

/**
 * The counter that holds a list's totalCount: no filter, or exactly one of channel / subscriberId / contextKeys.
 * Undefined when only counting the rows can tell: a transactionId (bounded by its index), read/seen, or two or
 * more filters combined.
 */
/** The page statement's values (messagePageQuery) for a filter without transaction ids. */
function pageParams(environmentId: string, filter: MessageListFilter, scope: string | undefined): MessagePageParams {
  return {
    environmentId,
    channel: filter.channel,
    subscriberId: filter.subscriberId,
    ...contextKeysParams(filter.contextKeys),
    read: filter.read === undefined ? undefined : toFlag(filter.read),
    seen: filter.seen === undefined ? undefined : toFlag(filter.seen),
    limit: filter.limit + 1,
    offset: filter.page * filter.limit,
    scope,
  };
}

/** A context keys filter as the page statement's values: keys in `contextKeysNorm`, none ('') in `noContextKeys`. */
function contextKeysParams(contextKeys: readonly string[] | undefined): Pick<MessagePageParams, 'contextKeysNorm' | 'noContextKeys'> {
  if (contextKeys === undefined) return {};
  const norm = normalizeContextKeys(contextKeys);
  return norm === '' ? { noContextKeys: norm } : { contextKeysNorm: norm };
}

function counterScopeOf(filter: MessageListFilter): string | undefined {
  if ((filter.transactionIds !== undefined && filter.transactionIds.length > 0) || filter.read !== undefined || filter.seen !== undefined) {
    return undefined;
  }
  const scopes: string[] = [];
  if (filter.channel !== undefined) scopes.push(channelScope(filter.channel));
  if (filter.subscriberId !== undefined) scopes.push(subscriberScope(filter.subscriberId));
  if (filter.contextKeys !== undefined) scopes.push(contextScope(normalizeContextKeys(filter.contextKeys)));
  if (scopes.length === 0) return COUNTER_SCOPE_ALL;
  return scopes.length === 1 ? scopes[0] : undefined;
}

/**
 * Changes to message_counters, summed per counter row and written as one upsert per INSERT_BATCH rows. Also used by
 * the benchmark seeder, which writes message rows directly.
 */
export class MessageCounterDeltas {
  private readonly deltas = new Map<string, MessageCountersTable>();

  constructor(private readonly dialect: SqlDialectName) {}

  add(message: CountedMessage, change: 1 | -1): void {
    const shard = this.dialect === 'postgres' ? counterShard(message.id) : 0;
    for (const scope of messageCounterScopes(message)) {
      const key = `${message.environment_id}\n${scope}\n${shard}`;
      const existing = this.deltas.get(key);
      if (existing) existing.count += change;
      else this.deltas.set(key, { environment_id: message.environment_id, scope, shard, count: change });
    }
  }

  /**
   * The changed counter rows, summed, in one fixed order (and forgotten): concurrent PostgreSQL transactions then lock
   * shared counter rows in the same order and cannot deadlock on them. (An upsert may also not touch one row twice,
   * hence the summing.)
   */
  take(): MessageCountersTable[] {
    const rows = [...this.deltas.values()].filter((row) => row.count !== 0).sort(compareCounterRows);
    this.deltas.clear();
    return rows;
  }

  /** Writes the changes, as `take` orders them. */
  async apply(db: Kysely<Database>): Promise<void> {
    for (const batch of chunks(this.take(), INSERT_BATCH)) {
      await upsertCounters.execute(db, this.dialect, batch);
    }
  }
}

// The statements of the delivery path, compiled once (see ReusableQuery).
const messageById = new ReusableQuery((db, p: { environmentId: string; id: string }) =>
  db.selectFrom('messages').selectAll().where('environment_id', '=', p.environmentId).where('id', '=', p.id).where('deleted', '=', 0),
);
const messageByJobId = new ReusableQuery((db, p: { environmentId: string; jobId: string }) =>
  db.selectFrom('messages').selectAll().where('environment_id', '=', p.environmentId).where('job_id', '=', p.jobId),
);
/**
 * A message list page in one set of columns: `select` adds them to a query of messages, `statement` is the page and
 * its counter compiled once per filter shape (building them with Kysely on every list request was about a twentieth
 * of the API's CPU on a list page). A transactionId filter (a list of any length) is built per request instead.
 */
interface MessagePageQuery<R> {
  select(query: SelectQueryBuilder<Database, 'messages', object>): SelectQueryBuilder<Database, 'messages', R>;
  statement: ReusableQuery<MessagePageParams>;
  /** The page's query, for a statement that wraps it. */
  build(db: Kysely<Database>, p: MessagePageParams): SelectQueryBuilder<Database, 'messages', R>;
}

interface MessagePageParams extends Record<string, unknown> {
  environmentId: string;
  channel?: string;
  subscriberId?: string;
  /** Context keys to match, never '' (see contextKeysParams). */
  contextKeysNorm?: string;
  /** '' when the filter asks for messages without context keys. */
  noContextKeys?: string;
  read?: number;
  seen?: number;
  limit: number;
  offset: number;
  /** The counter scope whose count each row carries as total_count (see SqlMessageRepository.page). */
  scope?: string;
}

function messagePageQuery<R>(select: MessagePageQuery<R>['select']): MessagePageQuery<R> {
  const build = (db: Kysely<Database>, p: MessagePageParams) => {
    const scope = p.scope;
    let query = select(db.selectFrom('messages'))
      .$if(scope !== undefined, (page) =>
        page.select((eb) =>
          eb
            .selectFrom('message_counters')
            .select((counter) => counter.fn.sum<number | string | null>('count').as('n'))
            .where('environment_id', '=', p.environmentId)
            .where('scope', '=', scope!)
            .as('total_count'),
        ),
      )
      .where('environment_id', '=', p.environmentId)
      .where('deleted', '=', 0);
    if (p.channel !== undefined) query = query.where('channel', '=', p.channel);
    if (p.subscriberId !== undefined) query = query.where('external_subscriber_id', '=', p.subscriberId);
    // The condition beside the value is the partial context index's (migration 0038), which a bound value cannot show.
    if (p.contextKeysNorm !== undefined) query = query.where('context_keys_norm', '=', p.contextKeysNorm).where(hasContextKeys('context_keys_norm'));
    if (p.noContextKeys !== undefined) query = query.where('context_keys_norm', '=', p.noContextKeys);
    if (p.read !== undefined) query = query.where('read', '=', p.read);
    if (p.seen !== undefined) query = query.where('seen', '=', p.seen);
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(p.limit).offset(p.offset);
  };
  return { select, statement: new ReusableQuery(build), build };
}

/** The page as Messages: the columns a Message is made from. */
const messagePage = messagePageQuery((query) => query.select(MESSAGE_PAGE_COLUMNS));
/** The page as list texts; the id only of a row without one (see listStored). */
const messageTextPage = messagePageQuery((query) =>
  query.select(['list_text', 'subscriber_id', sql<string | null>`case when list_text is null then id end`.as('legacy_id')]),
);
/**
 * A page of one subscriber's messages filtered by nothing else (the SDKs' list, the bench's). Its statement runs
 * prepared: messages_env_subscriber_list serves it whatever the values and the tables' size, where with another filter
 * (a channel, a context) a generic plan could settle on the other filter's index.
 */
function isSubscriberPage(filter: { subscriberId?: string; channel?: string; contextKeys?: unknown; contextKeysNorm?: string; noContextKeys?: string; read?: unknown; seen?: unknown; transactionIds?: unknown[] }): boolean {
  return (
    filter.subscriberId !== undefined &&
    filter.channel === undefined &&
    filter.contextKeys === undefined &&
    filter.contextKeysNorm === undefined &&
    filter.noContextKeys === undefined &&
    filter.read === undefined &&
    filter.seen === undefined &&
    (filter.transactionIds === undefined || filter.transactionIds.length === 0)
  );
}
/** A subscriber's record as messageTextPageWithSubscribers sends it: its columns' values as one JSON array text. */
function subscriberRowOf(row: Record<string, unknown>): SubscriberRow {
  const values = JSON.parse(row.subscriber_record as string) as unknown[];
  const subscriber: Record<string, unknown> = {};
  for (let index = 0; index < SUBSCRIBER_COLUMNS.length; index++) subscriber[SUBSCRIBER_COLUMNS[index]!] = values[index];
  return subscriber as unknown as SubscriberRow;
}
/**
 * PostgreSQL, a page of one subscriber's messages (isSubscriberPage): the text page, its count and its subscribers'
 * records in one prepared statement, where it was two statements and the page's unnamed (planned on every run).
 * The page's rows come first (in the page's order), then one row per distinct subscriber of the page, its columns'
 * values as one JSON array text in `subscriber_record` (null on the page's rows): a record is read and sent once per
 * subscriber, not once per message (folded into each row it cost PostgreSQL more than the round trip saved, session
 * 15). Five columns a row: sent as twenty columns of their own (`s_<column>`, with created_at, id and the part), the
 * row description and the nulls of every row were most of what `herald api` decoded per page (issue 24, session 28);
 * the order's columns stay inside. Each subscriber is one probe of the primary key (a lateral subquery with LIMIT 1, so
 * that it is not flattened into a join a small table's plan would scan). Unnamed, this statement's planning (~0.4 ms)
 * cost more than the two statements; prepared, its generic plan is pinned by test/store/postgres/message-page-plans.test.ts.
 */
const messageTextPageWithSubscribers = new ReusableQuery((db, p: MessagePageParams) => {
  const page = messageTextPage.build(db, p).select(['created_at', 'id']);
  // Every subscriber column is text or integer: JSON gives back the values pg's own parsing gives (strings, numbers, null).
  const record = sql`json_build_array(${sql.join(SUBSCRIBER_COLUMNS.map((column) => sql.ref(`s.${column}`)))})::text`;
  const pageColumns = p.scope === undefined ? sql`list_text, subscriber_id, legacy_id` : sql`list_text, subscriber_id, legacy_id, total_count`;
  const pageNulls = p.scope === undefined ? sql`null, null, null` : sql`null, null, null, null`;
  const statement = sql`with page as (${page})
select ${pageColumns}, subscriber_record from (
select 0 as part, ${pageColumns}, created_at, id, null::text as subscriber_record from page
union all
select 1, ${pageNulls}, null, null, ${record} from (select distinct subscriber_id from page) ids
cross join lateral (select * from subscribers where id = ids.subscriber_id and environment_id || '' = ${p.environmentId} limit 1) s
) page_rows
order by part, created_at desc, id desc`;
  return { compile: () => statement.compile(db) };
}, isSubscriberPage);
const messageCounter = new ReusableQuery((db, p: { environmentId: string; scope: string }) =>
  db
    .selectFrom('message_counters')
    .select((eb) => eb.fn.sum<number | string | null>('count').as('n'))
    .where('environment_id', '=', p.environmentId)
    .where('scope', '=', p.scope),
);
const insertMessages = new ReusableInsert('messages', (query) => query.onConflict((oc) => oc.column('job_id').doNothing()).returning('id'));
/** A new message's insert, named `inserted` for the statement that counts it (see createStatements). */
function insertedStatement(db: Kysely<Database>, dialect: SqlDialectName, row: MessageRow): NamedStatement {
  return { name: 'inserted', query: insertMessages.compile(db, dialect, [row]) };
}

/** What createStatements answers: PostgreSQL's counter upsert, or SQLite's counter rows for the commit's sums. */
export type CountedInsert = { inserted: NamedStatement; counters: CompiledQuery<unknown> } | { inserted: NamedStatement; counterRows: MessageCountersTable[] };

const upsertCounters = new ReusableInsert('message_counters', (query) =>
  query.onConflict((oc) => oc.columns(['environment_id', 'scope', 'shard']).doUpdateSet({ count: sql<number>`message_counters.count + excluded.count` })),
);

/**
 * The counter upsert of a message insert that runs as the CTE `inserted` (see insertCountedAsOneStatement): rows
 * given as `environment<i>`, `scope<i>`, `shard<i>`, `count<i>` for i = 0, 1, ..., written only when `inserted`
 * returned a row, in the order given (take's order, as the multi-row upsert of `apply` writes them: an ORDER BY here
 * would sort by the database's collation, not the same order). A row without `shard<i>` goes to the writing
 * connection's shard (BACKEND_SHARD_SQL): one row per scope, so the order stays take's.
 */
const upsertCountersIfInserted = new ReusableQuery((db, p: Record<string, unknown>) => {
  const rows: RawBuilder<unknown>[] = [];
  for (let index = 0; `scope${index}` in p; index++) {
    const shard = `shard${index}` in p ? sql`${p[`shard${index}`]}::integer` : sql.raw(BACKEND_SHARD_SQL);
    rows.push(sql`(${p[`environment${index}`]}::text, ${p[`scope${index}`]}::text, ${shard}, ${p[`count${index}`]}::integer)`);
  }
  const statement = sql`insert into message_counters (environment_id, scope, shard, count)
    select environment_id, scope, shard, count from (values ${sql.join(rows)}) as changes (environment_id, scope, shard, count)
    where exists (select 1 from inserted)
    on conflict (environment_id, scope, shard) do update set count = message_counters.count + excluded.count`;
  return { compile: () => statement.compile(db) };
});

function compareCounterRows(a: MessageCountersTable, b: MessageCountersTable): number {
  if (a.environment_id !== b.environment_id) return a.environment_id < b.environment_id ? -1 : 1;
  if (a.scope !== b.scope) return a.scope < b.scope ? -1 : 1;
  return a.shard - b.shard;
}

/** FNV-1a of the message id: spreads writers over the shards, and keeps one message's changes on one shard. */
function counterShard(messageId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < messageId.length; i++) hash = Math.imul(hash ^ messageId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % POSTGRES_COUNTER_SHARDS;
}

/** `read` implies `seen`; the un- forms clear only their own flag; a date is stamped whenever its flag is set. */
export function applyMarkAs(message: Message, markAs: MarkAs, at: string): Message {
  const next: Message = { ...message, updatedAt: at };
  if (markAs === 'read') Object.assign(next, { read: true, seen: true, lastReadDate: at, lastSeenDate: at });
  if (markAs === 'seen') Object.assign(next, { seen: true, lastSeenDate: at });
  if (markAs === 'unread') next.read = false;
  if (markAs === 'unseen') next.seen = false;
  return next;
}

/** The snapshot id each row written by toRow references, for saveSnapshots (a row's own keys are its columns). */
const rowSnapshots = new WeakMap<MessageRow, string>();

/** A row of messageTextPage: its list text, or (none) the message's id as legacy_id. */
type TextPageRow = { list_text?: string | null; subscriber_id: string; legacy_id?: string | null };

/**
 * A text page's rows as listed messages, in the page's order: a row with a list text carries it, and the id of the
 * template snapshot it references goes in `snapshotIds`; a row without one is in `legacy` by message id, to be read
 * from its columns.
 */
function listedOfRows(rows: TextPageRow[]): { data: ListedMessage[]; snapshotIds?: Map<ListedMessage, string>; legacy?: Map<string, ListedMessage> } {
  const data: ListedMessage[] = [];
  let snapshotIds: Map<ListedMessage, string> | undefined;
  let legacy: Map<string, ListedMessage> | undefined;
  for (const row of rows) {
    const text = row.list_text;
    if (text === null || text === undefined) {
      const listed: ListedMessage = { subscriberRecordId: row.subscriber_id };
      (legacy ??= new Map()).set(row.legacy_id!, listed);
      data.push(listed);
      continue;
    }
    const listed: ListedMessage = { subscriberRecordId: row.subscriber_id, text };
    const at = text.indexOf(MESSAGE_TEXT_TEMPLATE);
    if (at >= 0) (snapshotIds ??= new Map()).set(listed, text.slice(at + 1, at + 1 + TEMPLATE_SNAPSHOT_ID_LENGTH));
    data.push(listed);
  }
  return { data, snapshotIds, legacy };
}

function putTemplates(snapshotIds: Map<ListedMessage, string>, texts: Map<string, string>): void {
  for (const [listed, id] of snapshotIds) listed.template = snapshotText(texts, id);
}

function putSubscribers(data: ListedMessage[], byId: Map<string, Subscriber>): void {
  for (const listed of data) {
    const subscriber = byId.get(listed.subscriberRecordId);
    if (subscriber) listed.subscriber = subscriber;
  }
}

function snapshotText(texts: Map<string, string>, id: string): string {
  const text = texts.get(id);
  if (text === undefined) throw new Error(`message template snapshot ${id} not found`);
  return text;
}

function toRow(message: Message, externalSubscriberId: string, options: SqlStoreOptions, snapshots: TemplateSnapshots): MessageRow {
  const { messageText, messageTextHoldingDocument } = options;
  const document: Record<string, unknown> = { ...message };
  for (const field of COLUMN_FIELDS) delete document[field];
  // The workflow snapshot is kept once (message_templates) and referenced, in its place among the document's keys.
  let snapshotId: string | undefined;
  if (message.template !== null && typeof message.template === 'object') {
    snapshotId = snapshots.idOfTemplate(message.template);
    document.template = TEMPLATE_SNAPSHOT_PREFIX + snapshotId;
  }
  const row: MessageRow = {
    id: message._id,
    environment_id: message._environmentId,
    organization_id: message._organizationId,
    notification_id: message._notificationId,
    subscriber_id: message._subscriberId,
    external_subscriber_id: externalSubscriberId,
    template_id: message._templateId ?? null,
    job_id: message._jobId ?? null,
    transaction_id: message.transactionId,
    channel: message.channel,
    read: toFlag(message.read),
    seen: toFlag(message.seen),
    status: message.status,
    context_keys_norm: normalizeContextKeys(message.contextKeys),
    deleted: toFlag(message.deleted),
    document: toJson(document),
    created_at: message.createdAt,
    updated_at: message.updatedAt ?? message.createdAt,
    archived: toFlag(message.archived),
    snoozed_until: message.snoozedUntil ?? null,
    severity: message.severity ?? 'none',
    tags: tagsColumn(message.tags),
    // Undefined when unset: the insert leaves undefined columns out, so such rows keep their cached statement.
    provider_message_id: message.identifier || undefined,
    list_text: null,
  };
  // The list text of the row as the list reads it back (toStored), so a page from texts is the page from the columns.
  if (messageTextHoldingDocument) {
    const written = messageTextHoldingDocument(toStored(row, row.environment_id, row.deleted));
    row.list_text = written?.text ?? null;
    // One copy of the document's fields, not two: when the text gives them all back, the document is left empty and
    // read from the text (messageOf). Rows written before, or whose text drops something, keep their document.
    if (written?.holdsDocument) row.document = '';
  } else if (messageText) {
    row.list_text = messageText(toStored(row, row.environment_id, row.deleted)) ?? null;
  }
  if (snapshotId !== undefined) rowSnapshots.set(row, snapshotId);
  return row;
}

/** LIKE's wildcards and its escape character, escaped with a backslash. */
/**
 * What decides the SQL text of an Inbox filter's conditions: which fields are set, the snoozed direction, how many
 * severities and tags. Its values are written into the statement's parameters under `prefix` (see inboxConditions).
 */
interface InboxShape {
  key: string;
  prefix: string;
  read: boolean;
  seen: boolean;
  archived: boolean;
  snoozed?: boolean;
  severities?: number;
  tagGroups: number[];
  createdGte: boolean;
  createdLte: boolean;
  contextKeys: boolean;
}

function inboxShape(filter: InboxFilter, prefix: string, params: Record<string, unknown>): InboxShape {
  const set = (name: string, value: unknown) => (params[`${prefix}${name}`] = value);
  if (filter.read !== undefined) set('read', toFlag(filter.read));
  if (filter.seen !== undefined) set('seen', toFlag(filter.seen));
  if (filter.archived !== undefined) set('archived', toFlag(filter.archived));
  // An empty severity list matches nothing: one value no message has.
  const severities = filter.severity === undefined ? undefined : filter.severity.length ? filter.severity : [''];
  severities?.forEach((severity, index) => set(`severity${index}`, severity));
  const tagGroups = (filter.tags ?? []).map((group, groupIndex) => {
    group.forEach((tag, index) => set(`tag${groupIndex}_${index}`, `%|${escapeLike(tag)}|%`));
    return group.length;
  });
  if (filter.createdGte !== undefined) set('createdGte', filter.createdGte);
  if (filter.createdLte !== undefined) set('createdLte', filter.createdLte);
  if (filter.contextKeys !== undefined) set('contextKeys', normalizeContextKeys(filter.contextKeys));
  const shape = {
    prefix,
    read: filter.read !== undefined,
    seen: filter.seen !== undefined,
    archived: filter.archived !== undefined,
    snoozed: filter.snoozed,
    severities: severities?.length,
    tagGroups,
    createdGte: filter.createdGte !== undefined,
    createdLte: filter.createdLte !== undefined,
    contextKeys: filter.contextKeys !== undefined,
  };
  return { ...shape, key: JSON.stringify(shape) };
}

/** The subscriber's non-deleted in-app messages: the equality prefix of the messages_inbox index. */
function inboxScope(eb: ExpressionBuilder<Database, 'messages'>, p: Record<string, unknown>) {
  return [
    eb('environment_id', '=', p.environmentId as string),
    eb('subscriber_id', '=', p.subscriberRecordId as string),
    eb('channel', '=', 'in_app'),
    eb('deleted', '=', 0),
  ];
}

/** A filter's conditions (not its data filter), with every value taken from the parameters inboxShape wrote. */
function inboxConditions(eb: ExpressionBuilder<Database, 'messages'>, shape: InboxShape, p: Record<string, unknown>) {
  const value = (name: string) => p[`${shape.prefix}${name}`] as never;
  const conditions = [];
  if (shape.read) conditions.push(eb('read', '=', value('read')));
  if (shape.seen) conditions.push(eb('seen', '=', value('seen')));
  if (shape.archived) conditions.push(eb('archived', '=', value('archived')));
  if (shape.snoozed !== undefined) conditions.push(eb('snoozed_until', shape.snoozed ? 'is not' : 'is', null));
  if (shape.severities !== undefined) {
    conditions.push(eb('severity', 'in', Array.from({ length: shape.severities }, (_, index) => value(`severity${index}`))));
  }
  shape.tagGroups.forEach((size, groupIndex) => {
    const tags = Array.from({ length: size }, (_, index) => sql<boolean>`${sql.ref('tags')} like ${value(`tag${groupIndex}_${index}`)} escape '\\'`);
    conditions.push(eb.or(tags));
  });
  if (shape.createdGte) conditions.push(eb('created_at', '>=', value('createdGte')));
  if (shape.createdLte) conditions.push(eb('created_at', '<=', value('createdLte')));
  // Exact set, as /v1/messages filters; compared in the subscriber's own rows (inboxScope), so no index hint.
  if (shape.contextKeys) conditions.push(eb('context_keys_norm', '=', value('contextKeys')));
  return conditions;
}

/**
 * The Inbox statements, compiled once per shape (the list and the count run on every Inbox page view; building and
 * compiling them with Kysely each time was a tenth of the server's CPU in `npm run bench:inbox`). The key must hold
 * everything `build` reads besides the parameters. Shapes come from client filters, so the cache is bounded: past
 * its size a statement is built for the one call.
 */
const inboxStatements = new Map<string, ReusableQuery<Record<string, unknown>>>();
const INBOX_STATEMENTS_MAX = 1000;

function cachedInboxStatement(key: string, build: (db: Kysely<Database>, p: Record<string, unknown>) => Compilable<unknown>): ReusableQuery<Record<string, unknown>> {
  let statement = inboxStatements.get(key);
  if (!statement) {
    statement = new ReusableQuery(build);
    if (inboxStatements.size < INBOX_STATEMENTS_MAX) inboxStatements.set(key, statement);
  }
  return statement;
}

const inboxPosition = new ReusableQuery((db, p: { environmentId: string; subscriberRecordId: string; id: string }) =>
  db
    .selectFrom('messages')
    .select(['created_at', 'id'])
    .where('id', '=', p.id)
    .where(environmentIs(p.environmentId))
    .where('subscriber_id', '=', p.subscriberRecordId)
    .where('channel', '=', 'in_app'),
);

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (char) => `\\${char}`);
}

function toMessage(row: MessageDocumentRow): Message {
  return messageOf(toStored(row, row.environment_id, row.deleted));
}

/**
 * A row as the message list serves it: the columns' fields, the document left as text (see StoredMessage). A list
 * page does not read the two columns its filter fixes: they come as `environmentId` and `deleted`.
 */
function toStored(row: Omit<MessageDocumentRow, 'environment_id' | 'deleted'>, environmentId: string, deleted: number): StoredMessage {
  const columns: MessageColumnFields = {
    _id: row.id,
    _environmentId: environmentId,
    _organizationId: row.organization_id,
    _notificationId: row.notification_id,
    _subscriberId: row.subscriber_id,
    _jobId: row.job_id,
    _templateId: row.template_id,
    transactionId: row.transaction_id,
    channel: row.channel as Message['channel'],
    read: fromFlag(row.read),
    seen: fromFlag(row.seen),
    status: row.status as Message['status'],
    deleted: fromFlag(deleted),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  // Archive is Inbox state: only in-app messages carry the field (other messages keep what their document says).
  if (row.channel === 'in_app') columns.archived = fromFlag(row.archived);
  return { columns, document: row.document, text: row.list_text };
}
