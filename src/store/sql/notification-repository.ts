import { CompiledQuery, sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool, type Kysely, type Selectable } from 'kysely';
import { normalizeContextKeys } from '../../domain/context-keys.js';
import { PENDING_JOB_STATUSES, type EventStatus } from '../../domain/event-status.js';
import type { KeptEventText, NotificationEvent, Page } from '../../domain/types.js';
import type { NotificationListFilter, NotificationOwner, NotificationRepository, StoredJob } from '../ports.js';
import { channelsToMask } from './channel-mask.js';
import { asReadBack, jobInsertStatements, loadJobsWithDetails, loadJobsWithDetailsAndXmins } from './job-repository.js';
import { fromJson, toJson } from './json.js';
import type { Database, NotificationsTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { contextKeysAre, environmentIs } from './plan-hints.js';
import { markPrepared } from '../postgres/prepared-statements.js';
import { oneStatement } from './one-statement.js';
import { ReusableInsert, ReusableQuery } from './reusable-query.js';
import { snapshotReaderOf, type ReadRows, type SnapshotReader, type SqlRead } from './snapshot-reads.js';
import { chunks, containsPattern } from './subscriber-repository.js';

type NotificationRow = Selectable<NotificationsTable>;
/** A listed event: its row, or (sqliteTextPage) its id and kept text. */
type ListedRow = NotificationRow | { id: string; keptText: string };

/** Up to this many jobs in a status filter's partial index, the event list starts from them (fewIndexed). */
const FEW_INDEXED = 5000;

/** Rows per multi-row INSERT, well under the databases' bound-parameter limits. */
const INSERT_BATCH = 200;

/**
 * An event with more jobs than this many parameters (PostgreSQL's limit per statement is 65,535) is written as several
 * statements in a transaction rather than as one.
 */
export const ONE_STATEMENT_MAX_PARAMETERS = 30_000;

/** Event fields held in columns (or, for jobs, in their own table); the rest is the JSON document. */
const COLUMN_FIELDS = [
  '_id', '_environmentId', '_organizationId', '_subscriberId', '_templateId', '_digestedNotificationId',
  'transactionId', 'createdAt', 'updatedAt', 'jobs',
] as const;

export class SqlNotificationRepository implements NotificationRepository {
  /** SQLite outside a transaction: reads that see one state together (sqliteSeekPage). */
  private readonly snapshot: SnapshotReader | undefined;
  /** keepText's events waiting for the next turn of the event loop. */
  private textBatch: TextBatch | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {
    this.snapshot = options.dialect === 'sqlite' ? snapshotReaderOf(db) : undefined;
  }

  async createWithJobs(event: NotificationEvent, jobs: StoredJob[]): Promise<void> {
    const statements = await this.createWithJobsStatements(event, jobs);
    const parameters = statements.reduce((sum, statement) => sum + statement.parameters.length, 0);
    if (this.options.dialect === 'postgres' && parameters <= ONE_STATEMENT_MAX_PARAMETERS) {
      await this.db.executeQuery(oneStatement(statements.slice(0, -1), statements[statements.length - 1]));
      return;
    }
    const write = async (db: Kysely<Database>) => {
      for (const statement of statements) await db.executeQuery(statement);
    };
    await (this.db.isTransaction ? write(this.db) : this.db.transaction().execute(write));
  }

  /** The inserts of createWithJobs, not executed (the held writes of `SqlStore.batch` combine them with others). */
  async createWithJobsStatements(event: NotificationEvent, jobs: StoredJob[]): Promise<CompiledQuery<unknown>[]> {
    return (await this.createWithJobsAndTextStatements(event, jobs)).statements;
  }

  /**
   * createWithJobsStatements and, with `render`, the insert of the event's kept text (see keepText) rendered from the
   * rows those inserts write, as a read of them would give them back: to run after them (on SQLite their triggers clear
   * the event's text), in the same transaction. For the held writes of `SqlStore.batch`: a read back after the write,
   * in a transaction of its own, was 6 % of the CPU of a drain of in-app deliveries on SQLite; on PostgreSQL the
   * window's read back (keepTextOnPostgres) was ~0.17 ms of the worker's CPU and as much of PostgreSQL's per delivery
   * (BENCHMARKS.md, session 28). There the text carries its print made by the statement itself (keptTextWithOwnPrint).
   * `keptText` is undefined when `render` keeps nothing.
   */
  async createWithJobsAndTextStatements(
    event: NotificationEvent,
    jobs: StoredJob[],
    render?: (event: NotificationEvent) => string | undefined,
  ): Promise<{ statements: CompiledQuery<unknown>[]; keptText?: CompiledQuery<unknown> }> {
    const subscriber = event.subscriber ?? (await this.subscriberSummary(event));
    const row = toRow(event, subscriber.subscriberId, subscriber.email ?? null);
    const topics = await this.topicsStatement(event, row.created_at);
    const statements = [insertNotifications.compile(this.db, this.options.dialect, [row])];
    if (topics) statements.push(topics);
    const readBack: StoredJob[] | undefined = render ? [] : undefined;
    statements.push(...jobInsertStatements(this.db, this.options.dialect, jobs, readBack));
    if (!render || !readBack) return { statements };
    const stored = toEvent(asReadBack(row));
    stored.jobs = readBack.sort((a, b) => a.stepIndex - b.stepIndex);
    const text = render(stored);
    if (text === undefined) return { statements };
    if (this.options.dialect === 'postgres') return { statements, keptText: keptTextWithOwnPrint(event, text, jobs) };
    return { statements, keptText: insertKeptTexts.compile(this.db, 'sqlite', [{ notification_id: event._id, environment_id: event._environmentId, text }]) };
  }

  async createMany(events: NotificationEvent[]): Promise<void> {
    const unknown = events.filter((e) => !e.subscriber).map((e) => e._subscriberId);
    const summaries = new Map<string, { subscriberId: string; email: string | null }>();
    for (const chunk of chunks([...new Set(unknown)], 500)) {
      const rows = await this.db.selectFrom('subscribers').select(['id', 'subscriber_id', 'email']).where('id', 'in', chunk).execute();
      for (const row of rows) summaries.set(row.id, { subscriberId: row.subscriber_id, email: row.email });
    }
    const rows = events.map((event) => {
      const subscriber = event.subscriber ?? summaries.get(event._subscriberId);
      if (!subscriber) throw new Error(`notification ${event._id}: subscriber ${event._subscriberId} does not exist`);
      return toRow(event, subscriber.subscriberId, subscriber.email ?? null);
    });
    for (const batch of chunks(rows, INSERT_BATCH)) await this.db.insertInto('notifications').values(batch).execute();
    for (const [index, event] of events.entries()) await this.insertTopics(event, rows[index].created_at);
  }

  async get(environmentId: string, id: string): Promise<NotificationEvent | undefined> {
    const [row] = (await notificationById.execute(this.db, this.options.dialect, { environmentId, id })).rows;
    if (!row) return undefined;
    const jobs = await loadJobsWithDetails(this.db, environmentId, [id]);
    const event = toEvent(row);
    event.jobs = jobs.get(id) ?? [];
    return event;
  }

  /**
   * PostgreSQL: a statement that fails (division by zero) when an event with this id exists, in any environment, and
   * writes nothing otherwise: a data-modifying CTE runs whether or not it is read, so combined into a held write
   * (oneStatement) it fails the whole write. By the primary key (one probe, whatever the plan). The row it would touch
   * is not changed: the failure comes from its RETURNING, computed for a found row only (not a constant, so not
   * folded when planned).
   */
  takenIdGuardStatement(id: string): CompiledQuery<unknown> {
    if (this.options.dialect !== 'postgres') throw new Error('takenIdGuardStatement: PostgreSQL only');
    return takenIdGuard.compile(this.db, 'postgres', { id });
  }

  async findOwners(environmentId: string, ids: string[]): Promise<NotificationOwner[]> {
    if (ids.length === 0) return [];
    const query = this.options.dialect === 'postgres' ? notificationOwnersByKey : notificationOwners;
    const rows = (await query.execute(this.db, this.options.dialect, { environmentId, first: ids[0], second: ids[1] })).rows;
    const owners = rows.map((row) => ({ id: row.id, subscriberId: row.subscriber_id, transactionId: row.transaction_id }));
    if (ids.length <= 2) return owners;
    return [...owners, ...(await this.findOwners(environmentId, ids.slice(2)))];
  }

  async list(environmentId: string, filter: NotificationListFilter): Promise<Page<NotificationEvent>> {
    return (await this.listPageOf(environmentId, filter, false)) as Page<NotificationEvent>;
  }

  listWithTexts(environmentId: string, filter: NotificationListFilter): Promise<Page<NotificationEvent | KeptEventText>> {
    // SQLite outside a transaction, time bounds only (the activity feed, bench:http's events list): one synchronous block.
    if (this.snapshot && onlyTimeBounds(filter)) return this.sqliteTextPage(this.snapshot, environmentId, filter);
    return this.listPageOf(environmentId, filter, true);
  }

  get keepsTextsOverWindow(): boolean {
    return this.options.dialect === 'postgres';
  }

  keepText(environmentId: string, id: string, render: (event: NotificationEvent) => string | undefined): Promise<void> {
    if (this.options.dialect === 'postgres') return this.keepTextOnPostgres(environmentId, id, render);
    if (this.db.isTransaction) return keepTexts(this.db, new Map([[id, { environmentId, render }]]));
    // The events whose steps end in one turn of the event loop are kept together, as group commit writes them: one
    // transaction and four statements for all of them instead of six statements each.
    let batch = this.textBatch;
    if (!batch) {
      const items: TextBatch['items'] = new Map();
      const done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        this.textBatch = undefined;
        return this.db.transaction().execute((trx) => keepTexts(trx, items));
      });
      batch = this.textBatch = { items, done };
    }
    batch.items.set(id, { environmentId, render });
    return batch.done;
  }

  /**
   * PostgreSQL: the events that end within KEEP_WINDOW_MS are kept together, three statements for all of them (their
   * rows, their jobs and details, the texts), each text with its print (keptTextsPostgres). Nothing is locked and no
   * writer does anything for it: a page uses a text only while the print still matches (PAGE_ROWS_WITH_KEPT_TEXTS).
   */
  private keepTextOnPostgres(environmentId: string, id: string, render: (event: NotificationEvent) => string | undefined): Promise<void> {
    let batch = this.textBatch;
    if (!batch) {
      const items: TextBatch['items'] = new Map();
      let flush!: () => void;
      const started = new Promise<void>((resolve) => (flush = resolve));
      const timer = setTimeout(flush, KEEP_WINDOW_MS);
      timer.unref?.();
      const done = started.then(() => {
        clearTimeout(timer);
        if (this.textBatch?.items === items) this.textBatch = undefined;
        return keepTextsPostgres(this.db, items);
      });
      batch = this.textBatch = { items, done, flush };
    }
    batch.items.set(id, { environmentId, render });
    if (batch.items.size >= KEEP_BATCH_MAX) {
      this.textBatch = undefined;
      batch.flush?.();
    }
    return batch.done;
  }

  private async listPageOf(environmentId: string, filter: NotificationListFilter, withTexts: boolean): Promise<Page<NotificationEvent | KeptEventText>> {
    let rows: ListedRow[];
    let textsRead = false;
    if (withTexts && this.options.dialect === 'postgres' && onlyTimeBounds(filter) && filter.before !== undefined) {
      rows = await this.postgresTextPage(environmentId, { ...filter, before: filter.before });
      textsRead = true;
    } else {
      rows =
        filter.topicKey === undefined
          ? await this.listPage(environmentId, filter, await this.fewIndexed(environmentId, filter.status))
          : await this.listTopicPage(environmentId, filter.topicKey, filter);
    }
    const pageRows = rows.slice(0, filter.limit);
    const texts = new Map<string, string>();
    // SQLite's other pages read their kept texts by key (PostgreSQL's texts need their print checked: assembled).
    if (withTexts && !textsRead && this.options.dialect === 'sqlite' && pageRows.length > 0) {
      const params: Record<string, string> = {};
      pageRows.forEach((row, index) => (params[`n${index}`] = row.id));
      for (const kept of (await keptTextsOf.execute(this.db, this.options.dialect, params)).rows) texts.set(kept.notification_id, kept.text);
    }
    const assembled = pageRows.filter((row) => !('keptText' in row) && !texts.has(row.id)).map((row) => row.id);
    const jobs = await loadJobsWithDetails(this.db, environmentId, assembled, this.options.dialect);
    return {
      data: pageRows.map((row) => {
        if ('keptText' in row) return { _id: row.id, keptText: row.keptText };
        const keptText = texts.get(row.id);
        if (keptText !== undefined) return { _id: row.id, keptText };
        const event = toEvent(row);
        event.jobs = jobs.get(row.id) ?? [];
        return event;
      }),
      page: filter.page,
      pageSize: filter.limit,
      hasMore: rows.length > filter.limit,
    };
  }

  /**
   * PostgreSQL, a filter of time bounds only, with kept texts: the page (plus one row, for hasMore) in one statement,
   * each event as its kept text where its print still matches (no document read), otherwise as its row.
   */
  private async postgresTextPage(environmentId: string, filter: NotificationListFilter & { before: string }): Promise<ListedRow[]> {
    const offset = filter.page * filter.limit;
    const p = { environmentId, after: filter.after, before: filter.before, limit: filter.limit + 1, offset };
    const query = offset >= (this.options.seekFromOffset ?? SEEK_FROM_OFFSET) ? seekPage(p, true) : firstTextPage(p);
    const { rows } = await this.db.executeQuery(query as CompiledQuery<NotificationRow & { kept_text: string | null }>);
    return rows.map((row) => (row.kept_text !== null ? { id: row.id, keptText: row.kept_text } : row));
  }

  /**
   * SQLite, a filter of time bounds only, with kept texts: the page (plus one row, for hasMore) as one value per event,
   * its kept text or its id marked as one (textPageRead), in list order from the statement; then in the same
   * synchronous block the whole rows of the page's events without a text only, whose jobs are read after it. Reading
   * every column of every event (its document, 15 values a row) and then the texts by key cost about twice the page's
   * ids and texts (raw better-sqlite3 over profile-lists' 20,000 events); the page's ids, times and texts as rows
   * (three values, an array and an object each, sorted in JavaScript) cost better-sqlite3 and the JavaScript around
   * it more than one value a row.
   */
  private async sqliteTextPage(snapshot: SnapshotReader, environmentId: string, filter: NotificationListFilter): Promise<Page<NotificationEvent | KeptEventText>> {
    const { limit, after, before } = filter;
    const offset = filter.page * limit;
    const seek = before !== undefined && offset >= (this.options.seekFromOffset ?? SQLITE_SEEK_FROM_OFFSET);
    const tenthsFrom = this.options.tenthsFromEvents;
    const { listed, more, whole } = await snapshot.readTogether((read, values) => {
      const down = (below: string | undefined, pageOffset: number, rows: number) => values<string>(textPageRead('desc', environmentId, after, undefined, below, rows, pageOffset));
      const up = (second: string, pageOffset: number, rows: number) => values<string>(textPageRead('asc', environmentId, after, second, second + BUCKET_END, rows, pageOffset)).reverse();
      // The page and one more row for hasMore, unless the seek knows there are more (its rows: the page's only).
      const { rows: listed, more } = seek
        ? sqliteSeek(read, { environmentId, after, before: before!, limit: limit + 1, pageSize: limit, offset, tenthsFrom }, { down, up })
        : { rows: down(before, offset, limit + 1), more: false };
      let missing: Record<string, string> | undefined;
      let count = 0;
      for (let index = 0; index < listed.length && index < limit; index++) {
        const value = listed[index]!;
        if (value.charCodeAt(0) === ID_MARK_CODE) (missing ??= { environmentId })[`n${count++}`] = value.slice(1);
      }
      let whole: Map<string, NotificationRow> | undefined;
      if (missing !== undefined) {
        whole = new Map();
        for (const row of read(notificationsByIds.compile(this.db, 'sqlite', missing) as CompiledQuery<NotificationRow>)) whole.set(row.id, row);
      }
      return { listed, more, whole };
    });
    const jobs = whole !== undefined ? await loadJobsWithDetails(this.db, environmentId, [...whole.keys()], 'sqlite') : undefined;
    const data: Array<NotificationEvent | KeptEventText> = [];
    for (let index = 0; index < listed.length && index < limit; index++) {
      const value = listed[index]!;
      if (value.charCodeAt(0) !== ID_MARK_CODE) {
        data.push({ _id: idOfKeptText(value), keptText: value });
        continue;
      }
      // Read in the same block as the page: it exists.
      const event = toEvent(whole!.get(value.slice(1))!);
      event.jobs = jobs!.get(event._id) ?? [];
      data.push(event);
    }
    return { data, page: filter.page, pageSize: limit, hasMore: more || listed.length > limit };
  }

  async save(event: NotificationEvent): Promise<void> {
    const existing = await this.db
      .selectFrom('notifications')
      .select(['external_subscriber_id', 'subscriber_email', 'created_at'])
      .where('environment_id', '=', event._environmentId)
      .where('id', '=', event._id)
      .executeTakeFirst();
    if (!existing) return;
    const row = toRow(event, event.subscriber?.subscriberId ?? existing.external_subscriber_id, event.subscriber?.email ?? existing.subscriber_email);
    const { id: _id, environment_id: _env, organization_id: _org, created_at: _created, ...changes } = row;
    await this.db.updateTable('notifications').set(changes).where('environment_id', '=', event._environmentId).where('id', '=', event._id).execute();
    await this.db.deleteFrom('notification_topics').where('environment_id', '=', event._environmentId).where('notification_id', '=', event._id).execute();
    await this.insertTopics(event, existing.created_at);
  }

  /**
   * Whether the events a status filter selects are few enough (at most FEW_INDEXED jobs in its partial index) for the
   * list to start from them: read by primary key and sorted, their cost is their number. Otherwise the list walks
   * the environment's events newest first and checks each, which costs the rows walked until the page is full:
   * little when they are many, every event of the environment when there are fewer than a page (a few delayed
   * steps among a million events took SQLite 2 s that way).
   */
  private async fewIndexed(environmentId: string, status: EventStatus | undefined): Promise<boolean> {
    if (status === undefined || status === 'completed') return false;
    const few = this.options.fewIndexedStatusJobs ?? FEW_INDEXED;
    const { found } = await this.db
      .selectFrom(indexedEvents(this.db, environmentId, status).limit(few + 1).as('indexed'))
      .select((eb) => eb.fn.countAll<number>().as('found'))
      .executeTakeFirstOrThrow();
    return Number(found) <= few;
  }

  /**
   * The page (plus one row, for hasMore) newest first, by offset. `fromStatusIndex`: the environment is checked on
   * the rows found (written as plan-hints' environmentIs, qualified), so the planner starts from the status filter's partial index, not from an
   * index of the environment's events in time order (see fewIndexed).
   */
  private async listPage(environmentId: string, filter: NotificationListFilter, fromStatusIndex: boolean): Promise<NotificationRow[]> {
    if (fromStatusIndex) {
      return this.db
        .selectFrom('notifications')
        .selectAll()
        .where((eb) => listConditions(eb, environmentId, filter, true))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(filter.limit + 1)
        .offset(filter.page * filter.limit)
        .execute();
    }
    if (onlyTimeBounds(filter)) {
      const offset = filter.page * filter.limit;
      if (this.options.dialect === 'postgres' && offset >= (this.options.seekFromOffset ?? SEEK_FROM_OFFSET) && filter.before !== undefined) {
        const seek = seekPage({ environmentId, after: filter.after, before: filter.before, limit: filter.limit + 1, offset });
        return (await this.db.executeQuery(seek)).rows as NotificationRow[];
      }
      const params = { environmentId, after: filter.after, before: filter.before, limit: filter.limit + 1, offset };
      if (this.snapshot && offset >= (this.options.seekFromOffset ?? SQLITE_SEEK_FROM_OFFSET) && filter.before !== undefined) {
        return sqliteSeekPage(this.db, this.snapshot, { ...params, before: filter.before, tenthsFrom: this.options.tenthsFromEvents });
      }
      return (await timeBoundedPage.execute(this.db, this.options.dialect, params)).rows as unknown as NotificationRow[];
    }
    // A deferred join: the OFFSET walks only the ids, in notifications_env_created (environment_id, created_at, id),
    // which holds every column the walk needs (on PostgreSQL an index-only scan of the all-visible pages); only the
    // page's own rows are then read, by primary key. Reading whole rows while walking cost every skipped event's
    // row on deep pages (issue 24: PostgreSQL spent 58 ms on page 500 of 10).
    const pageIds = this.db
      .selectFrom('notifications')
      .select('notifications.id')
      .where((eb) => listConditions(eb, environmentId, filter))
      .orderBy('notifications.created_at', 'desc')
      .orderBy('notifications.id', 'desc')
      .limit(filter.limit + 1)
      .offset(filter.page * filter.limit);
    return this.db
      .selectFrom(pageIds.as('page'))
      .innerJoin('notifications', 'notifications.id', 'page.id')
      .selectAll('notifications')
      .orderBy('notifications.created_at', 'desc')
      .orderBy('notifications.id', 'desc')
      .execute();
  }

  /**
   * The same page when a topicKey is given, driven from the topic's links in (created_at, notification_id) order,
   * which equal the event's (created_at, id): the index range of the topic yields the page's rows in order, and
   * the other filters are checked on the joined events. The time bounds also go on the link, to narrow that range.
   */
  private listTopicPage(environmentId: string, topicKey: string, filter: NotificationListFilter): Promise<NotificationRow[]> {
    let query = this.db
      .selectFrom('notification_topics as nt')
      .innerJoin('notifications', 'notifications.id', 'nt.notification_id')
      .selectAll('notifications')
      .where('nt.environment_id', '=', environmentId)
      .where('nt.topic_key', '=', topicKey);
    if (filter.after !== undefined) query = query.where('nt.created_at', '>', filter.after);
    if (filter.before !== undefined) query = query.where('nt.created_at', '<', filter.before);
    return query
      .where((eb) => listConditions(eb, environmentId, filter))
      .orderBy('nt.created_at', 'desc')
      .orderBy('nt.notification_id', 'desc')
      .limit(filter.limit + 1)
      .offset(filter.page * filter.limit)
      .execute();
  }

  private async subscriberSummary(event: NotificationEvent): Promise<{ subscriberId: string; email?: string | null }> {
    const row = await this.db
      .selectFrom('subscribers')
      .select(['subscriber_id', 'email'])
      .where('environment_id', '=', event._environmentId)
      .where('id', '=', event._subscriberId)
      .executeTakeFirst();
    if (!row) throw new Error(`notification ${event._id}: subscriber ${event._subscriberId} does not exist`);
    return { subscriberId: row.subscriber_id, email: row.email };
  }

  /**
   * One row per topic the event went through, with the subscriber's subscription to it (for `subscriptionId`) and
   * the event's stored created_at (the topicKey list orders by it).
   */
  private async insertTopics(event: NotificationEvent, createdAt: string): Promise<void> {
    const statement = await this.topicsStatement(event, createdAt);
    if (statement) await this.db.executeQuery(statement);
  }

  /** The insert of insertTopics (its subscriptions read now), or undefined when the event came through no topic. */
  private async topicsStatement(event: NotificationEvent, createdAt: string): Promise<CompiledQuery<unknown> | undefined> {
    const topics = event.topics ?? [];
    if (topics.length === 0) return undefined;
    const subscriptions = await this.db
      .selectFrom('topic_subscriptions')
      .select(['id', 'topic_id'])
      .where('environment_id', '=', event._environmentId)
      .where('subscriber_id', '=', event._subscriberId)
      .where('topic_id', 'in', topics.map((topic) => topic._topicId))
      .execute();
    const subscriptionByTopic = new Map(subscriptions.map((s) => [s.topic_id, s.id]));
    const unique = [...new Map(topics.map((topic) => [topic._topicId, topic])).values()];
    return this.db
      .insertInto('notification_topics')
      .values(
        unique.map((topic) => ({
          notification_id: event._id,
          environment_id: event._environmentId,
          topic_id: topic._topicId,
          topic_key: topic.topicKey,
          subscription_id: subscriptionByTopic.get(topic._topicId) ?? null,
          created_at: createdAt,
        })),
      )
      .compile();
  }
}

/** No filter but the time bounds (the activity feed's first view, and every page of it). */
function onlyTimeBounds(filter: NotificationListFilter): boolean {
  return (
    !filter.channels?.length && !filter.templates?.length && !filter.emails?.length && !filter.subscriberIds?.length && !filter.severity?.length &&
    filter.transactionId === undefined && filter.contextKeys === undefined && filter.status === undefined &&
    filter.subscriptionId === undefined && (filter.search === undefined || filter.search === '') && filter.topicKey === undefined
  );
}

type TimeBoundsParams = { environmentId: string; after?: string; from?: string; before?: string; limit: number; offset: number };

/**
 * The page of a filter of time bounds only (`from`: a lower bound, inclusive, sqliteSeek's second), compiled once per
 * shape (building it with Kysely on every request cost about a twentieth of the API's CPU on a list page): listPage's
 * deferred join, the whole rows. `asc`: the same rows in the opposite order (sqliteSeek reads a page near a second's
 * oldest end upwards).
 */
function timeBoundsQuery(direction: 'desc' | 'asc') {
  return new ReusableQuery((db, p: TimeBoundsParams) => {
    let ids = db.selectFrom('notifications').select(['notifications.id', 'notifications.created_at']).where('notifications.environment_id', '=', p.environmentId);
    if (p.after !== undefined) ids = ids.where('notifications.created_at', '>', p.after);
    if (p.from !== undefined) ids = ids.where('notifications.created_at', '>=', p.from);
    if (p.before !== undefined) ids = ids.where('notifications.created_at', '<', p.before);
    const pageIds = ids.orderBy('notifications.created_at', direction).orderBy('notifications.id', direction).limit(p.limit).offset(p.offset);
    return db
      .selectFrom(pageIds.as('page'))
      .innerJoin('notifications', 'notifications.id', 'page.id')
      .selectAll('notifications')
      .orderBy('notifications.created_at', direction)
      .orderBy('notifications.id', direction);
  });
}
const timeBoundedPage = timeBoundsQuery('desc');
const timeBoundedPageUp = timeBoundsQuery('asc');

/**
 * sqliteTextPage's value for an event without a kept text: its id after this mark. A kept text is the JSON of an
 * object (serializeNotificationEvent) and starts with `{`, never with it.
 */
const ID_MARK = ' ';
const ID_MARK_CODE = ID_MARK.charCodeAt(0);

/**
 * SQLite: the page of a filter of time bounds only (`from`: a lower bound, inclusive, sqliteSeek's second) as one value
 * per event: its kept text, or ID_MARK and its id where it has none. The ORDER BY is the walk of
 * notifications_env_created (no sorter), and the OFFSET skips its rows before the text's sub-select runs, so a text is
 * read for the page's rows only. One text per shape, written here: Kysely's build, compile and bind cost more per page
 * than the statement's own JavaScript (the LIMIT is a cast, as HeraldSqliteQueryCompiler writes it).
 */
function textPageRead(
  direction: 'desc' | 'asc',
  environmentId: string,
  after: string | undefined,
  from: string | undefined,
  before: string | undefined,
  limit: number,
  offset: number,
): SqlRead<unknown> {
  const parameters: unknown[] = [environmentId];
  if (after !== undefined) parameters.push(after);
  if (from !== undefined) parameters.push(from);
  if (before !== undefined) parameters.push(before);
  parameters.push(limit, offset);
  const shape = (direction === 'asc' ? 8 : 0) + (after !== undefined ? 4 : 0) + (from !== undefined ? 2 : 0) + (before !== undefined ? 1 : 0);
  const sql = (textPageTexts[shape] ??= [
    `select coalesce((select "notification_texts"."text" from "notification_texts" where "notification_texts"."notification_id" = "notifications"."id"), '${ID_MARK}' || "notifications"."id")`,
    'from "notifications" where "notifications"."environment_id" = ?',
    after !== undefined ? 'and "notifications"."created_at" > ?' : '',
    from !== undefined ? 'and "notifications"."created_at" >= ?' : '',
    before !== undefined ? 'and "notifications"."created_at" < ?' : '',
    `order by "notifications"."created_at" ${direction}, "notifications"."id" ${direction} limit cast(? as integer) offset ?`,
  ].filter((part) => part !== '').join(' '));
  return { sql, parameters };
}
const textPageTexts: string[] = [];

const KEPT_TEXT_ID_AT = '{"_id":"'.length;

/**
 * The `_id` of a kept text: its first property (NotificationEventSchema's first), read from the text without parsing
 * it; parsed when the text does not start so or the id holds an escape.
 */
function idOfKeptText(text: string): string {
  const end = text.startsWith('{"_id":"') ? text.indexOf('"', KEPT_TEXT_ID_AT) : -1;
  if (end > 0) {
    const id = text.slice(KEPT_TEXT_ID_AT, end);
    if (!id.includes('\\')) return id;
  }
  return (JSON.parse(text) as { _id: string })._id;
}

/**
 * An environment's events by id (`n0`, `n1`, … hold the ids): sqliteTextPage's events without a kept text. The
 * environment is checked on the rows found (environmentIs): written as `environment_id = ?`, SQLite without statistics
 * searched notifications_env_transaction_list by the environment and read every event of it (a deep page of events
 * without kept texts: 100-200 ms at 100k events, no answer within 5 s at 1M under load), where the primary key reads
 * the page's ten.
 */
export const notificationsByIds = new ReusableQuery((db, p: Record<string, string>) => {
  const { environmentId, ...ids } = p;
  return db.selectFrom('notifications').selectAll().where(environmentIs(environmentId!)).where('id', 'in', Object.values(ids));
});

/**
 * From which offset a page of time bounds only skips whole seconds (seekPage), on PostgreSQL: every page but the first.
 * Session 12 started at 1,000, where walking the index (a heap visit per entry without a fresh visibility map) costs
 * more than the seek (a page at offset ~13,500 of 27,000 events at 2,700 a second: 30 ms walked, 2.2 ms sought). Below
 * it, on a table without statistics (autovacuum off or not yet run: bench:http's case) PostgreSQL estimated ~20 rows
 * for the environment and, for any offset past that, read every event of it with a bitmap scan and sorted them all:
 * 8-16 ms a page at 8,000 events, growing with them (pages 1-99: the p99 of scaled-out bench:http), against ~0.2 ms
 * sought. The first page keeps its backward index scan (no offset: the planner picks the index for a small LIMIT).
 */
export const SEEK_FROM_OFFSET = 1;
/**
 * Seconds seekPage reads at most; below them it walks the index with OFFSET. Reading a second costs about as much as
 * skipping 8 index entries (8 shard rows; since 0034 one row per connection that wrote events in the second, about as
 * many), so a cap only matters where seconds hold fewer events than that. It was 16
 * until session 18: the events of bench:http are written as their triggers are processed (~300 a second scaled out),
 * so 16 seconds held ~5,000 events and every deeper page walked the rest of its offset in the index, a heap visit per
 * entry (10,266 entries for offset 15,000 of 31,000: 12.5 ms of 13.2, EXPLAIN ANALYZE). The seconds are read lazily,
 * newest first, and no more than the page needs (`low`), so a high cap costs only the pages that need it. The LIMIT
 * is a sub-select: written as a value, PostgreSQL without statistics on notification_buckets (autovacuum off or not
 * yet run) estimates a few dozen rows for an environment, and against a LIMIT above that it read and sorted all of
 * them (a bitmap scan) instead of reading the newest seconds in index order (test/store/postgres/list-query-plans.test.ts);
 * a sub-select's LIMIT is planned as a fraction of the rows, as a prepared statement's generic plan does.
 */
const SEEK_MAX_SECONDS = 1024;
/** A second of created_at: the bucket of notification_buckets (migration 0026) is this prefix of it. */
const BUCKET_LENGTH = 19;
/** Appended to a bucket, an upper bound above every created_at of that second (ISO 8601 text is ASCII). */
const BUCKET_END = '\u007f';

/**
 * On SQLite, from which offset a page of time bounds only skips whole seconds (sqliteSeekPage) instead of walking the
 * index (~30-50 ns of CPU an entry): the seek's own reads (a batch of seconds, a second's tenths) cost more than a
 * shallow walk. It was 2,000 until session 22; since the tenths (0033) and the LIMIT's cast the seek costs less, and
 * on a kept bench:http data set (52,000 events, ~1,800 a second; `listWithTexts`, CPU µs a page, three rounds) pages
 * of offsets 0-490 walked 36-44 against sought 44-49, 500-990 49-54 against 43-52, 1,000-1,490 60-67 against 43-50,
 * 1,500-1,990 74-77 against 45-54.
 */
export const SQLITE_SEEK_FROM_OFFSET = 1000;
/**
 * Seconds sqliteSeekPage reads per statement after its first read: as many as the last read says the rest of the
 * offset needs (its seconds' average count), with some to spare, at least MIN_SECONDS_PER_READ and at most this. Each
 * second read costs ~0.35 µs (raw better-sqlite3, 8 rows 3.8-5.7 µs, 32 rows 13-15 µs); a fixed 32 read 20-30 seconds
 * more than a page of bench:http needed (events written at ~1,000-2,000 a second, pages up to offset 20,000).
 */
const SECONDS_PER_READ = 32;
const MIN_SECONDS_PER_READ = 4;
/**
 * Seconds its first statement reads: each second read costs SQLite ~0.4-0.7 µs (raw better-sqlite3 on the shared
 * machine: 8 seconds 12-13 µs, 32 seconds 26-37 µs), and where events are dense (bench:http writes 4,000-5,000 a
 * second) the page lies within the first few.
 */
const SECONDS_FIRST_READ = 8;
/**
 * From this many events in the page's second, sqliteSeek finds the page's tenth of that second (notification_tenths)
 * before reading it: the tenths' statement (up to ten rows) costs about as much as walking ~100-150 index entries, and
 * a page walks on average a quarter of its second's events without them (from the nearer end).
 */
const TENTHS_FROM_EVENTS = 400;
/**
 * Below this many events a second on average over the seconds read, sqliteSeekPage walks the index from there:
 * reading a second's count into JavaScript costs about as much as walking 5-10 index entries (each ~50-80 ns).
 */
const SPARSE_EVENTS_PER_SECOND = 16;

/**
 * A deep page of time bounds only on SQLite, as timeBoundedPage would return it: the per-second counts of
 * notification_buckets (kept by triggers, migration 0027) are added up newest first in JavaScript until they pass the
 * offset, and the page is read below the second above the one found, skipping only the rest of the offset (at most
 * that second's events, where the index walk skipped every event above the page). All of it runs as one synchronous
 * block on the one connection (SnapshotReader), so the counts and the rows are of one state: exact under concurrent
 * inserts and deletes. The rows of `before`'s own second at or above `before` are counted by its bucket but not
 * listed: counted apart when that second has a bucket. Seconds count from `after`'s on, whose rows at or below `after` come last and are left
 * out by the page's own bound. When the seconds read are sparse (fewer than SPARSE_EVENTS_PER_SECOND events each on
 * average), the page walks the index below the last of them with the remaining offset.
 */
function sqliteSeekPage(
  db: Kysely<Database>,
  snapshot: SnapshotReader,
  p: { environmentId: string; after?: string; before: string; limit: number; offset: number; tenthsFrom?: number },
): Promise<NotificationRow[]> {
  const { tenthsFrom: _tenthsFrom, ...bounds } = p;
  return snapshot.readTogether((read) => {
    // No pageSize: every page it reads holds the one more row for hasMore (listPage's rows).
    const pages: SeekPages<NotificationRow> = {
      down: (before, offset, limit) => read(timeBoundedPage.compile(db, 'sqlite', { ...bounds, before, offset, limit }) as CompiledQuery<NotificationRow>),
      up: (second, offset, limit) =>
        read(timeBoundedPageUp.compile(db, 'sqlite', { ...bounds, from: second, before: second + BUCKET_END, offset, limit }) as CompiledQuery<NotificationRow>).reverse(),
    };
    return sqliteSeek(read, p, pages).rows;
  });
}

/**
 * sqliteSeek's reads of the page: `down`, the page below `before` skipping `offset` rows; `up`, the page of a second
 * (or tenth) from its start, skipping `offset` rows oldest first, returned newest first.
 */
interface SeekPages<R> {
  down(before: string, offset: number, limit: number): R[];
  up(second: string, offset: number, limit: number): R[];
}

/**
 * sqliteSeekPage's seek inside a synchronous block: finds where the page starts and reads it with `pages.down` (the
 * page below `before`, skipping `offset` rows), whatever the page's statement reads. A page that lies wholly in the
 * second found, nearer its oldest end than its newest, is read upwards from that end with `pages.up` (the second's
 * rows from its start, oldest first, skipping `offset`) and reversed: the walk inside the second is then at most half
 * its events (bench:http writes 4,000-5,000 events a second: ~2,200 index entries walked per page on average, the
 * largest part of the seek). `limit`: the rows a page reads (the page and one more, for hasMore); with `pageSize` (the
 * page's own rows), a page whose second holds listed rows below it reads `pageSize` rows and `more` is true.
 */
function sqliteSeek<R>(
  read: ReadRows,
  p: { environmentId: string; after?: string; before: string; offset: number; limit: number; pageSize?: number; tenthsFrom?: number },
  pages: SeekPages<R>,
): { rows: R[]; more: boolean } {
  const top = p.before.slice(0, BUCKET_LENGTH);
  const floor = p.after?.slice(0, BUCKET_LENGTH);
  let skipped = 0;
  let below = top + BUCKET_END;
  let seconds = 0;
  let limit = SECONDS_FIRST_READ;
  for (;;) {
    const buckets = read<{ bucket: string; n: number }>(bucketsBelow(p.environmentId, below, floor, limit));
    let inRead = 0;
    for (const { bucket, n } of buckets) {
      const count = Number(n);
      inRead += count;
      // The rows of `before`'s own second at or above `before` are in its count but not in the bounds: counted apart,
      // only when that second holds events (a page asked for at the time of the request, bench:http's and the
      // dashboard's, usually finds it empty: one statement fewer).
      if (bucket === top) {
        const [above] = read<{ n: number }>({ sql: ROWS_FROM, parameters: [p.environmentId, p.before, top + BUCKET_END] });
        skipped -= Number(above?.n ?? 0);
      }
      if (skipped + count > p.offset) {
        // With `pageSize`: when the second holds a listed row below the page, hasMore is known and the page's own rows
        // are read, without the one more row for hasMore (on the events page, its kept text). Every row of the second
        // is listed but in `after`'s second (its rows at or below `after` are counted, not listed).
        const more = p.pageSize !== undefined && bucket !== floor && skipped + count - p.offset > p.pageSize;
        const limit = more ? p.pageSize! : p.limit;
        // In `before`'s second the page is read below `before` itself: nothing above that bound is in the bounds.
        if (bucket === top) return { rows: pages.down(p.before, p.offset, limit), more };
        const fromNewest = p.offset - skipped;
        // Every row of the second counts (not `after`'s second, whose rows at or below `after` are counted, not listed).
        if (bucket !== floor && count >= (p.tenthsFrom ?? TENTHS_FROM_EVENTS)) {
          const rows = readInTenth(read, p.environmentId, limit, pages, bucket, fromNewest);
          if (rows) return { rows, more };
        }
        const fromOldest = count - fromNewest - limit;
        if (fromOldest >= 0 && fromOldest < fromNewest && bucket !== floor) return { rows: pages.up(bucket, fromOldest, limit), more };
        return { rows: pages.down(bucket + BUCKET_END, fromNewest, limit), more };
      }
      skipped += count;
    }
    // Every event in the bounds is above the offset: past the end.
    if (buckets.length < limit) return { rows: [], more: false };
    seconds += buckets.length;
    below = buckets[buckets.length - 1]!.bucket;
    if (skipped < seconds * SPARSE_EVENTS_PER_SECOND) return { rows: pages.down(below, p.offset - skipped, p.limit), more: false };
    limit = secondsToRead(p.offset - skipped, inRead / buckets.length);
  }
}

/**
 * How many seconds sqliteSeek's next read asks for: enough for `remaining` rows at `perSecond` (the average of the
 * seconds of the last read: a dense burst read first says nothing of the sparse seconds below it) and half as many
 * again, plus two; within [MIN_SECONDS_PER_READ, SECONDS_PER_READ]. Reading too few costs one more statement
 * (~1.5 µs), too many ~0.35 µs a second.
 */
function secondsToRead(remaining: number, perSecond: number): number {
  if (!(perSecond > 0)) return SECONDS_PER_READ;
  return Math.min(SECONDS_PER_READ, Math.max(MIN_SECONDS_PER_READ, Math.ceil((remaining / perSecond) * 1.5) + 2));
}

/**
 * sqliteSeek's page inside a second found by its count (not `before`'s or `after`'s, every row of which is in the
 * bounds): the second's tenths (notification_tenths, migration 0033) are added up newest first, in the same synchronous
 * block, until they pass `fromNewest` (the rows of the second above the page); the page is then read from the tenth
 * found, down from its top or, nearer its oldest end and wholly inside it, up from its start, so the walk is at most
 * that tenth's events instead of the second's. Undefined when the tenths do not reach the offset (none kept): the
 * caller reads by the second as before.
 */
function readInTenth<R>(read: ReadRows, environmentId: string, limit: number, pages: SeekPages<R>, second: string, fromNewest: number): R[] | undefined {
  const tenths = read<{ bucket: string; n: number }>({ sql: TENTHS_OF, parameters: [environmentId, second, second + BUCKET_END] });
  let skipped = 0;
  for (const { bucket, n } of tenths) {
    const count = Number(n);
    if (skipped + count > fromNewest) {
      const inTenth = fromNewest - skipped;
      const fromOldest = count - inTenth - limit;
      if (fromOldest >= 0 && fromOldest < inTenth) return pages.up(bucket, fromOldest, limit);
      return pages.down(bucket + BUCKET_END, inTenth, limit);
    }
    skipped += count;
  }
  return undefined;
}

// sqliteSeek's statements (SQLite only), written once: Kysely's build and bind per statement cost more than the
// JavaScript of the seek itself. LIMITs as HeraldSqliteQueryCompiler writes them (a cast, so not planned again per run).

/** A second's tenths (notification_tenths) with their counts, newest first: at most ten rows. Values: environment, from, below. */
const TENTHS_OF =
  'select "bucket", "n" from "notification_tenths" where "environment_id" = ? and "bucket" >= ? and "bucket" < ? order by "bucket" desc';

/** How many of an environment's events lie in [from, below): sqliteSeekPage's rows of `before`'s second not listed. */
const ROWS_FROM = 'select count(*) as "n" from "notifications" where "environment_id" = ? and "created_at" >= ? and "created_at" < ?';

const BUCKETS_BELOW = 'select "bucket", "n" from "notification_buckets" where "environment_id" = ? and "bucket" < ?';
const BUCKETS_BELOW_ORDER = ' order by "bucket" desc limit cast(? as integer)';
const BUCKETS_BELOW_TEXT = BUCKETS_BELOW + BUCKETS_BELOW_ORDER;
const BUCKETS_BELOW_FLOOR_TEXT = BUCKETS_BELOW + ' and "bucket" >= ?' + BUCKETS_BELOW_ORDER;

/** An environment's seconds below `below` (from `floor` on), newest first, with their counts (one shard on SQLite). */
function bucketsBelow(environmentId: string, below: string, floor: string | undefined, limit: number): SqlRead<{ bucket: string; n: number }> {
  return floor === undefined
    ? { sql: BUCKETS_BELOW_TEXT, parameters: [environmentId, below, limit] }
    : { sql: BUCKETS_BELOW_FLOOR_TEXT, parameters: [environmentId, below, floor, limit] };
}

/**
 * A deep page of time bounds only on PostgreSQL, as timeBoundedPage would return it, in one statement: the same snapshot for the
 * counts and the rows, so the page is exact under concurrent inserts and deletes. Positions count from the newest
 * event below `before`; a prefix of created_at orders as created_at does, so the environment's seconds of created_at
 * (notification_buckets) partition its events in list order. `top` counts the rows of `before`'s own second that lie
 * below it; `seconds` reads the next SEEK_MAX_SECONDS seconds below, newest first, and `walk` adds up their counts.
 * `seek` picks where the page starts: in `before`'s second; in the first second through which more rows than the
 * offset lie (the page is read below the second above it, skipping only the rest of the offset); or, when the seconds
 * read hold fewer rows than the offset, below the last of them with OFFSET (sparse seconds), or nowhere (no second
 * left: an empty page). Seconds count from `after`'s on, whose rows at or below `after` come last and are left out
 * by the page's own bound. The page's only upper bound is seek's (never above `before`), so the index range starts
 * there. The anchor is the one second where the running count passes the offset, so PostgreSQL stops reading
 * seconds there (no sort); the fallback's aggregate reads them only when no second passes it.
 * `up`: a page that lies wholly in its second (`before`'s or the anchor's, not `after`'s), nearer that second's oldest
 * event than its newest, is read upwards from the second's start, skipping the events below it (its count, less the
 * rows above the page and the page): the walk inside the second passes at most half of it, a heap visit per entry on
 * a table without a fresh visibility map (−14 % of PostgreSQL's CPU per page serially, BENCHMARKS.md session 30).
 * Exact as the rest: the counts and the rows are read in one snapshot. The other branch runs only without `up`.
 */
export function seekPage(
  p: { environmentId: string; after?: string; before: string; limit: number; offset: number },
  withTexts = false,
): CompiledQuery<NotificationRow> {
  const withAfter = p.after !== undefined;
  const values: Record<string, unknown> = {
    env: p.environmentId,
    before: p.before,
    top: p.before.slice(0, BUCKET_LENGTH),
    after: p.after,
    floor: p.after?.slice(0, BUCKET_LENGTH),
    offset: p.offset,
    limit: p.limit,
    steps: SEEK_MAX_SECONDS,
  };
  const { text, names } = seekPageText(withAfter, withTexts);
  return CompiledQuery.raw(text, names.map((name) => values[name])) as CompiledQuery<NotificationRow>;
}

const seekTexts = new Map<string, { text: string; names: string[] }>();
// `low`: the second that holds the page's last row (its running count reaches offset + limit), a lower bound of the
// page; found as the one second where the running count passes that bound (no ORDER BY over `walk`, which would read
// every second up to SEEK_MAX_SECONDS). Without it, on tables never analysed (autovacuum off), PostgreSQL read every
// event below `upper` by a bitmap scan and sorted them (15-30 ms a page at 15,000 events, EXPLAIN ANALYZE) instead of
// walking the index backwards (1-6 ms); bounded, either plan reads about the seconds of the page.

/** seekPage's PostgreSQL text for this shape, each named value numbered once ($1, reused), and the names in order. */
function seekPageText(withAfter: boolean, withTexts: boolean): { text: string; names: string[] } {
  const cached = seekTexts.get(`${withAfter} ${withTexts}`);
  if (cached) return cached;
  const afterRow = withAfter ? 'and created_at > :after' : '';
  // `top` counts its rows in the order of notifications_env_created: the statement is prepared, and the generic plan
  // PostgreSQL made while the table was small (every index estimated at one row) counted them by
  // notifications_env_transaction_list, a walk of every event of the environment once it grew; ordered, any other
  // index needs a sort (test/store/postgres/event-page-prepared.test.ts).
  const template = `with top as (
  select count(*) as n from (
    select created_at from notifications where environment_id = :env and created_at >= :top and created_at < :before ${afterRow}
    order by created_at desc
  ) in_second
),
seconds as (
  select bucket, sum(n) as n from notification_buckets
  where environment_id = :env and bucket < :top ${withAfter ? 'and bucket >= :floor' : ''}
  group by bucket order by bucket desc limit (select cast(:steps as bigint))
),
walk as (
  select bucket, n, lag(bucket, 1, cast(:top as text)) over (order by bucket desc) as upper,
    (select n from top) + sum(n) over (order by bucket desc rows between unbounded preceding and current row) as through
  from seconds
),
seek as (
  select cast(:before as text) as upper, cast(:offset as bigint) as skip, cast(:top as text) as second, n from top where n > :offset
  union all
  select upper, skip, bucket, n from (
    select upper, cast(:offset - (through - n) as bigint) as skip, bucket, n from walk
    where (select n from top) <= :offset and through > :offset and through - n <= :offset limit 1
  ) anchor
  union all
  select case when count(*) = :steps then coalesce(min(bucket), cast(:top as text)) end, cast(:offset - coalesce(max(through), (select n from top)) as bigint), null, null
  from walk where (select n from top) <= :offset and not exists (select 1 from walk w where w.through > :offset)
  having (select n from top) <= :offset and not exists (select 1 from walk w where w.through > :offset)
),
low as (
  select case when (select n from top) >= :offset + :limit then cast(:top as text)
    else (select bucket from walk where through >= :offset + :limit and through - n < :offset + :limit limit 1) end as bucket
),
up as (
  select second, n - skip - :limit as rest from seek
  where second is not null and skip + :limit <= n and n - skip - :limit < skip ${withAfter ? 'and second > :floor' : ''}
),
page as (
  select id from (
    select id from notifications
    where not exists (select 1 from up)
      and environment_id = :env and created_at < (select upper from seek) and created_at >= coalesce((select bucket from low), '') ${afterRow}
    order by created_at desc, id desc limit :limit offset (select coalesce(skip, 0) from seek)
  ) down
  union all
  select id from (
    select id from notifications
    where exists (select 1 from up)
      and environment_id = :env and created_at >= (select second from up) and created_at < (select upper from seek)
    order by created_at, id limit :limit offset (select rest from up)
  ) upward
  limit :limit
)
`;
  // Added after the named values are numbered: its casts (`::text`) are not names.
  const rowsOfPage = `${withTexts ? PAGE_ROWS_WITH_KEPT_TEXTS : 'select notifications.* from page inner join notifications on notifications.id = page.id'}
order by notifications.created_at desc, notifications.id desc`;
  const names: string[] = [];
  const text = template.replace(/:([a-z]+)/g, (_, name: string) => {
    if (!names.includes(name)) names.push(name);
    return `$${names.indexOf(name) + 1}`;
  }) + rowsOfPage;
  const compiled = { text, names };
  // Prepared, though a list page: its parse and plan were most of PostgreSQL's CPU per page (1.8-2.7 of 3.2-4.5 ms,
  // serial runs over 24,000 events); its generic plan is held on tables grown after it was made
  // (test/store/postgres/event-page-prepared.test.ts), and the connection prepares it again after 256 and 4,096 runs.
  markPrepared(text, { list: true });
  seekTexts.set(`${withAfter} ${withTexts}`, compiled);
  return compiled;
}

/**
 * The WHERE of the event list. Every filter narrows the environment's rows; list filters are any-of,
 * and the filters combine with AND. Sub-selects keep subscription and name matching off the hot columns.
 * All but topicKey, which drives its own query (listTopicPage); references are qualified with `notifications.`
 * so that query can use these on its join.
 */
function listConditions(eb: ExpressionBuilder<Database, 'notifications'>, environmentId: string, filter: NotificationListFilter, environmentOnRows = false) {
  const conditions: Expression<SqlBool>[] = [
    environmentOnRows ? sql<SqlBool>`${sql.ref('notifications.environment_id')} || '' = ${environmentId}` : eb('notifications.environment_id', '=', environmentId),
  ];
  if (filter.channels?.length) {
    conditions.push(sql<boolean>`(${sql.ref('notifications.channels_mask')} & ${channelsToMask(filter.channels)}) <> 0`);
  }
  if (filter.templates?.length) conditions.push(eb('notifications.template_id', 'in', filter.templates));
  if (filter.emails?.length) conditions.push(eb('notifications.subscriber_email', 'in', filter.emails));
  if (filter.subscriberIds?.length) conditions.push(eb('notifications.external_subscriber_id', 'in', filter.subscriberIds));
  if (filter.severity?.length) conditions.push(eb('notifications.severity', 'in', filter.severity));
  if (filter.transactionId !== undefined) conditions.push(eb('notifications.transaction_id', '=', filter.transactionId));
  if (filter.contextKeys !== undefined) conditions.push(contextKeysAre('notifications.context_keys_norm', normalizeContextKeys(filter.contextKeys)));
  if (filter.after !== undefined) conditions.push(eb('notifications.created_at', '>', filter.after));
  if (filter.before !== undefined) conditions.push(eb('notifications.created_at', '<', filter.before));
  if (filter.status !== undefined) conditions.push(statusCondition(eb, environmentId, filter.status));
  if (filter.subscriptionId !== undefined) {
    conditions.push(
      eb(
        'notifications.id',
        'in',
        eb.selectFrom('notification_topics').select('notification_id').where('environment_id', '=', environmentId).where('subscription_id', '=', filter.subscriptionId),
      ),
    );
  }
  if (filter.search !== undefined && filter.search !== '') {
    const pattern = containsPattern(filter.search);
    conditions.push(
      eb.or([
        sql<boolean>`lower(${sql.ref('notifications.external_subscriber_id')}) like ${pattern} escape '\\'`,
        sql<boolean>`lower(${sql.ref('notifications.subscriber_email')}) like ${pattern} escape '\\'`,
        eb(
          'notifications.subscriber_id',
          'in',
          eb
            .selectFrom('subscribers')
            .select('subscribers.id')
            .where('subscribers.environment_id', '=', environmentId)
            .where((sub) =>
              sub.or([
                sql<boolean>`lower(${sql.ref('subscribers.first_name')}) like ${pattern} escape '\\'`,
                sql<boolean>`lower(${sql.ref('subscribers.last_name')}) like ${pattern} escape '\\'`,
                sql<boolean>`lower(${sql.ref('subscribers.first_name')} || ' ' || ${sql.ref('subscribers.last_name')}) like ${pattern} escape '\\'`,
              ]),
            ),
        ),
      ]),
    );
  }
  return eb.and(conditions);
}

/** An event status whose events a partial index of migration 0016 lists (by a failed, canceled or unfinished job). */
type IndexedStatus = Exclude<EventStatus, 'completed'>;

/**
 * The term of each partial index of migration 0016, written as there: SQLite uses a partial index only for a query
 * that states its condition, compared as written, with literals (test/store/sqlite/query-plans checks it).
 */
function indexedJobStatus(status: IndexedStatus): RawBuilder<SqlBool> {
  if (status === 'pending') return sql<SqlBool>`${sql.ref('jobs.status')} in (${sql.join(PENDING_JOB_STATUSES.map((value) => sql.lit(value)))})`;
  return sql<SqlBool>`${sql.ref('jobs.status')} = ${sql.lit(status)}`;
}

/**
 * The event's status (domain/event-status.ts) as a condition on its jobs: among the events the index lists (any
 * event with a failed job is failed; an unfinished job makes it pending unless one failed; a canceled one makes it
 * canceled if all are), checked on the event's own jobs (jobs_notification_step, a few rows). `completed` has no
 * index (most events are completed): no failed or unfinished job, one not canceled.
 */
function statusCondition(eb: ExpressionBuilder<Database, 'notifications'>, environmentId: string, status: EventStatus): Expression<SqlBool> {
  const jobsWith = (condition: (jobs: ExpressionBuilder<Database, 'jobs'>) => Expression<SqlBool>) =>
    eb.exists(eb.selectFrom('jobs').select(sql.lit(1).as('one')).whereRef('jobs.notification_id', '=', 'notifications.id').where(condition));
  const statusIn = (statuses: readonly string[]) => (jobs: ExpressionBuilder<Database, 'jobs'>) =>
    jobs('jobs.status', 'in', statuses.map((value) => sql.lit(value)));
  const notCanceled = (jobs: ExpressionBuilder<Database, 'jobs'>) => jobs('jobs.status', '<>', sql.lit('canceled'));
  if (status === 'completed') return eb.and([eb.not(jobsWith(statusIn(['failed', ...PENDING_JOB_STATUSES]))), jobsWith(notCanceled)]);
  const listed = eb(
    'notifications.id',
    'in',
    eb.selectFrom('jobs').select('jobs.notification_id').where('jobs.environment_id', '=', environmentId).where(indexedJobStatus(status)),
  );
  if (status === 'failed') return listed;
  if (status === 'pending') return eb.and([listed, eb.not(jobsWith(statusIn(['failed'])))]);
  return eb.and([listed, eb.not(jobsWith(notCanceled))]);
}

/** The ids of the environment's events that have a job of this status, from its partial index (as in statusCondition). */
function indexedEvents(db: Kysely<Database>, environmentId: string, status: IndexedStatus) {
  return db.selectFrom('jobs').select('jobs.notification_id').where('jobs.environment_id', '=', environmentId).where(indexedJobStatus(status));
}

function idTime(id: string): string {
  return new Date(parseInt(id.slice(0, 8), 16) * 1000).toISOString();
}

function toRow(event: NotificationEvent, externalSubscriberId: string, subscriberEmail: string | null): NotificationRow {
  const document: Record<string, unknown> = { ...event };
  for (const field of COLUMN_FIELDS) delete document[field];
  // The spec's event subscriber has optional strings, not nullable ones: a profile's cleared fields are left out.
  if (event.subscriber) document.subscriber = Object.fromEntries(Object.entries(event.subscriber).filter(([, value]) => value !== null && value !== undefined));
  const createdAt = event.createdAt ?? idTime(event._id);
  return {
    id: event._id,
    environment_id: event._environmentId,
    organization_id: event._organizationId,
    subscriber_id: event._subscriberId,
    external_subscriber_id: externalSubscriberId,
    subscriber_email: subscriberEmail,
    template_id: event._templateId ?? null,
    transaction_id: event.transactionId,
    digested_notification_id: event._digestedNotificationId ?? null,
    channels_mask: channelsToMask(event.channels),
    severity: event.severity ?? null,
    context_keys_norm: normalizeContextKeys(event.contextKeys),
    document: toJson(document),
    created_at: createdAt,
    updated_at: event.updatedAt ?? createdAt,
  };
}

function toEvent(row: NotificationRow): NotificationEvent {
  // The columns are written onto the freshly parsed document (cheaper than spreading it into a new object).
  const event = fromJson<Partial<NotificationEvent>>(row.document, {}) as NotificationEvent;
  event._id = row.id;
  event._environmentId = row.environment_id;
  event._organizationId = row.organization_id;
  event._subscriberId = row.subscriber_id;
  event.transactionId = row.transaction_id;
  event.createdAt = row.created_at;
  event.updatedAt = row.updated_at;
  if (row.template_id !== null) event._templateId = row.template_id;
  if (row.digested_notification_id !== null) event._digestedNotificationId = row.digested_notification_id;
  return event;
}

// The statements of the trigger path, compiled once (see ReusableQuery).
const insertNotifications = new ReusableInsert('notifications');
/**
 * Up to two ids per statement (`second` may be undefined: its own compiled shape). By the primary key: PostgreSQL
 * without statistics (a fresh table, autovacuum off) planned `environment_id = ? and id in (...)` as a walk of
 * `notifications_env_transaction_list` over every event of the environment, 0.5 ms of backend CPU per delivery at
 * 2,000 events and growing with them (BENCHMARKS.md, session 13), so the environment is checked on the rows found.
 */
const notificationOwners = new ReusableQuery((db, p: { environmentId: string; first: string; second?: string }) =>
  db
    .selectFrom('notifications')
    .select(['id', 'subscriber_id', 'transaction_id'])
    .where(environmentIs(p.environmentId))
    .where('id', 'in', p.second === undefined ? [p.first] : [p.first, p.second]),
);

interface TextBatch {
  items: Map<string, { environmentId: string; render: (event: NotificationEvent) => string | undefined }>;
  done: Promise<void>;
  /** PostgreSQL: starts the keeping before its window ends (the batch is full). */
  flush?: () => void;
}

/**
 * PostgreSQL: how long the worker gathers ended events before keeping their texts. Statements per keeping are three
 * whatever the number of events, so a wide window makes them a small part of each delivery (the round-trip budget's
 * one-at-a-time deliveries, ~40 ms apart, share one keeping by about twelve); a page asks for a text only after it.
 */
const KEEP_WINDOW_MS = 500;
/** PostgreSQL: at most this many events per keeping (its reads take the ids as one array). */
const KEEP_BATCH_MAX = 500;

/**
 * PostgreSQL, kept event texts: an event's print is the `xmin` of its row, then of its jobs' rows and of their
 * execution details' rows (by the event: `notification_id`), each kind sorted. A text is kept with the print of the
 * rows it was written from, and a page uses it only while the print of the rows stored now is the same. Any later
 * committed write changes it: an insert or update leaves a row version whose xmin is a transaction that had not
 * committed when the rows were read (so that xmin was not in the print, or not as often), a delete leaves fewer rows.
 * No writer has to know about the texts (delivery reports, cancels, retention, hand-written SQL all invalidate them),
 * there are no triggers or locks, and the keeping needs no transaction (each kind is read by one statement, one
 * snapshot). A stale text is never shown; it stays in the table until kept again or its event is deleted.
 */
function eventPrint(eventXmin: string, jobXmins: string[], detailXmins: string[]): string {
  const sorted = (xmins: string[]) => xmins.map(Number).sort((x, y) => x - y).join(',');
  return `${eventXmin}/${sorted(jobXmins)}/${sorted(detailXmins)}`;
}

/** eventPrint in SQL, of the row `notifications` (the statement's alias). Exported for the tests. */
export const PRINT_SQL = `notifications.xmin::text || '/' ||
    coalesce((select string_agg(j.xmin::text, ',' order by j.xmin::text::bigint) from jobs j where j.notification_id = notifications.id), '') || '/' ||
    coalesce((select string_agg(d.xmin::text, ',' order by d.xmin::text::bigint) from execution_details d where d.notification_id = notifications.id), '')`;

/** The columns of a page's row besides its id: sent only for an event without a usable kept text. */
const PAGE_ROW_COLUMNS = [
  'environment_id', 'organization_id', 'subscriber_id', 'external_subscriber_id', 'subscriber_email', 'template_id', 'transaction_id',
  'digested_notification_id', 'channels_mask', 'severity', 'context_keys_norm', 'document', 'created_at', 'updated_at',
] as const;

/**
 * PostgreSQL: the rows of a page (`page`: its ids) with each event's kept text where its print matches, in which case
 * only its id and text are sent: every other column is null (the page writes the text as it is), so PostgreSQL writes
 * and `herald api` decodes two fields of the row, not sixteen. The print's reads run only for an event with a text.
 * `offset 0` keeps the lateral a probe of the primary key per row: flattened, PostgreSQL hashed the whole table of
 * texts for every page (6 ms at 15,000 texts, EXPLAIN ANALYZE). Reading the page's prints together (the jobs' and the
 * details' xmins each by one `= any` scan of the page's ids, grouped by event) cost the same or more than these 22
 * sub-plans (BENCHMARKS.md, session 27).
 */
const PAGE_ROWS_WITH_KEPT_TEXTS = `select notifications.id,
  ${PAGE_ROW_COLUMNS.map((column) => `case when kept.text is null then notifications.${column} end as ${column}`).join(',\n  ')},
  kept.text as kept_text
from page inner join notifications on notifications.id = page.id
left join lateral (
  select notification_texts.text from notification_texts
  where notification_texts.notification_id = notifications.id and notification_texts.print = ${PRINT_SQL}
  offset 0
) kept on true`;

const firstTextPageTexts = new Map<string, string>();
/** Page sizes whose first page runs prepared (the first ones asked for): each is a statement per connection. */
const FIRST_PAGE_PREPARED_SIZES = 8;
let firstPagePreparedSizes = 0;

/**
 * PostgreSQL: the first page of time bounds only (listPage's deferred join) with kept texts. At offset 0 (the
 * activity feed's first view, the page asked for most) it runs prepared, without an OFFSET and with its LIMIT written
 * in: unnamed, PostgreSQL parsed and planned its CTE and the print's sub-selects on every request. A LIMIT parameter
 * would not do: PostgreSQL's generic plan then assumes a tenth of the rows is read, and once the table has statistics
 * it scanned and sorted every event of the environment (test/store/postgres/first-event-page-prepared.test.ts); with
 * the page size written in, its generic plan walks notifications_env_created backwards from `before`. Another offset
 * (seekFromOffset set above 1), or a page size past the first few asked for, stays unnamed.
 */
export function firstTextPage(p: { environmentId: string; after?: string; before: string; limit: number; offset: number }): CompiledQuery<unknown> {
  const withAfter = p.after !== undefined;
  const first = p.offset === 0 && Number.isSafeInteger(p.limit);
  const shape = first ? `${withAfter} ${p.limit}` : `${withAfter}`;
  let text = firstTextPageTexts.get(shape);
  if (text === undefined) {
    text = `with page as (
  select id from notifications
  where environment_id = $1 and created_at < $2 ${withAfter ? `and created_at > $${first ? 3 : 5}` : ''}
  order by created_at desc, id desc limit ${first ? String(p.limit) : '$3 offset $4'}
)
${PAGE_ROWS_WITH_KEPT_TEXTS}
order by notifications.created_at desc, notifications.id desc`;
    if (first && firstPagePreparedSizes < FIRST_PAGE_PREPARED_SIZES * 2) {
      firstPagePreparedSizes++;
      markPrepared(text, { list: true });
    }
    firstTextPageTexts.set(shape, text);
  }
  const values: unknown[] = first ? [p.environmentId, p.before] : [p.environmentId, p.before, p.limit, p.offset];
  if (withAfter) values.push(p.after);
  return CompiledQuery.raw(text, values);
}

/**
 * PostgreSQL: the kept text of an event written, with all its jobs and their execution details, by the statement (or
 * transaction) this insert is part of: every one of those rows then has that transaction's id as its `xmin`, so the
 * print (eventPrint) is that id once for the event, once per job and once per detail, and the statement writes it
 * itself (`pg_current_xact_id()`, PostgreSQL 13+). Only for a new event: rows of it written by another transaction
 * would belong in the print too. A later write to any of them changes the print as for a text kept after reading.
 */
function keptTextWithOwnPrint(event: NotificationEvent, text: string, jobs: StoredJob[]): CompiledQuery<unknown> {
  const details = jobs.reduce((sum, job) => sum + job.executionDetails.length, 0);
  const print = `x/${Array(jobs.length).fill('x').join(',')}/${Array(details).fill('x').join(',')}`;
  return CompiledQuery.raw(KEEP_TEXT_WITH_OWN_PRINT, [event._id, event._environmentId, text, print]);
}

const KEEP_TEXT_WITH_OWN_PRINT = `insert into notification_texts (notification_id, environment_id, text, print)
values ($1, $2, $3, replace($4::text, 'x', pg_current_xact_id()::xid::text))
on conflict (notification_id) do update set environment_id = excluded.environment_id, text = excluded.text, print = excluded.print`;

/**
 * PostgreSQL: reads the events (their rows, then their jobs and details, each with its rows' xmins) and keeps the
 * texts `render` gives, each with its print (eventPrint), in one insert. No transaction: see eventPrint.
 */
async function keepTextsPostgres(db: Kysely<Database>, items: TextBatch['items']): Promise<void> {
  if (items.size === 0) return;
  const { rows } = await db.executeQuery(
    CompiledQuery.raw('select notifications.*, xmin::text as row_xmin from notifications where id = any($1::text[])', [[...items.keys()]]),
  );
  const events = (rows as Array<NotificationRow & { row_xmin: string }>).filter((row) => items.get(row.id)?.environmentId === row.environment_id);
  const kept: { ids: string[]; environments: string[]; texts: string[]; prints: string[] } = { ids: [], environments: [], texts: [], prints: [] };
  for (const environmentId of new Set(events.map((row) => row.environment_id))) {
    const ofEnvironment = events.filter((row) => row.environment_id === environmentId);
    const jobs = await loadJobsWithDetailsAndXmins(db, environmentId, ofEnvironment.map((row) => row.id));
    for (const row of ofEnvironment) {
      const read = jobs.get(row.id) ?? { jobs: [], jobXmins: [], detailXmins: [] };
      const event = toEvent(row);
      event.jobs = read.jobs;
      const text = items.get(row.id)!.render(event);
      if (text === undefined) continue;
      kept.ids.push(row.id);
      kept.environments.push(environmentId);
      kept.texts.push(text);
      kept.prints.push(eventPrint(row.row_xmin, read.jobXmins, read.detailXmins));
    }
  }
  if (kept.ids.length === 0) return;
  await db.executeQuery(
    CompiledQuery.raw(
      `insert into notification_texts (notification_id, environment_id, text, print)
select * from unnest($1::text[], $2::text[], $3::text[], $4::text[])
on conflict (notification_id) do update set environment_id = excluded.environment_id, text = excluded.text, print = excluded.print`,
      [kept.ids, kept.environments, kept.texts, kept.prints],
    ),
  );
}

/**
 * Reads the events (with their jobs and details) and keeps the texts `render` gives for them. Inside a transaction:
 * SQLite runs no other write until it ends, so no write lands between the read and the text it keeps.
 */
async function keepTexts(trx: Kysely<Database>, items: TextBatch['items']): Promise<void> {
  const ids = [...items.keys()];
  const kept: Array<{ notification_id: string; environment_id: string; text: string }> = [];
  for (const chunk of chunks(ids, 500)) {
    const rows = await trx.selectFrom('notifications').selectAll().where('id', 'in', chunk).execute();
    for (const environmentId of new Set(rows.map((row) => row.environment_id))) {
      const ofEnvironment = rows.filter((row) => row.environment_id === environmentId && items.get(row.id)?.environmentId === environmentId);
      const jobs = await loadJobsWithDetails(trx, environmentId, ofEnvironment.map((row) => row.id), 'sqlite');
      for (const row of ofEnvironment) {
        const event = toEvent(row);
        event.jobs = jobs.get(row.id) ?? [];
        const text = items.get(row.id)!.render(event);
        if (text !== undefined) kept.push({ notification_id: row.id, environment_id: environmentId, text });
      }
    }
  }
  for (const batch of chunks(kept, INSERT_BATCH)) await insertKeptTexts.execute(trx, 'sqlite', batch);
}

/** The kept texts of a page's events (n0, n1, ...: the shape is their number), by the primary key. */
const keptTextsOf = new ReusableQuery((db, p: Record<string, string>) =>
  db.selectFrom('notification_texts').select(['notification_id', 'text']).where('notification_id', 'in', Object.values(p)),
);
const insertKeptTexts = new ReusableInsert('notification_texts', (insert) =>
  insert.onConflict((conflict) =>
    conflict.column('notification_id').doUpdateSet((eb) => ({ text: eb.ref('excluded.text'), environment_id: eb.ref('excluded.environment_id') })),
  ),
);
/**
 * PostgreSQL: `notificationOwners` as one lookup of one key per id. A prepared statement's generic plan made while
 * the table was small (no statistics, under the ten-page floor the planner assumes for a table never vacuumed) priced
 * two probes of the primary key above a sequential scan, and that connection kept scanning the whole table as it grew
 * (BENCHMARKS.md, session 14); one probe is always cheaper than the floor's scan.
 */
const notificationOwnersByKey = new ReusableQuery((db, p: { environmentId: string; first: string; second?: string }) => {
  const byId = (id: string) =>
    db.selectFrom('notifications').select(['id', 'subscriber_id', 'transaction_id']).where(environmentIs(p.environmentId)).where('id', '=', id);
  return p.second === undefined ? byId(p.first) : byId(p.first).unionAll(byId(p.second));
});

const takenIdGuard = new ReusableQuery((db, p: { id: string }) =>
  db
    .updateTable('notifications')
    .set({ updated_at: sql.ref('updated_at') })
    .where('id', '=', p.id)
    .returning(sql<number>`1 / (length(id) - length(id))`.as('taken')),
);

/** By the primary key, as `notificationOwners`. */
const notificationById = new ReusableQuery((db, p: { environmentId: string; id: string }) =>
  db.selectFrom('notifications').selectAll().where(environmentIs(p.environmentId)).where('id', '=', p.id),
);
