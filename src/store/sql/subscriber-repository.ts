import { CompiledQuery, sql, type Expression, type ExpressionBuilder, type SqlBool, type Kysely, type Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.js';
import type { Page, Subscriber } from '../../domain/types.js';
import type { SubscriberListFilter, SubscriberRepository } from '../ports.js';
import { fromFlag, fromJson, toFlag, toJson } from './json.js';
import type { Database, SubscribersTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { NOT_DELETED } from './live-rows.js';
import { environmentIs } from './plan-hints.js';
import { ReusableInsert, ReusableQuery } from './reusable-query.js';
import { markPrepared } from '../postgres/prepared-statements.js';
import { CoalescedBatches } from '../coalesced-batches.js';

export type SubscriberRow = Selectable<SubscribersTable>;
/** Every column of a subscriber row (toSubscriber reads them all), for statements that name them. */
export const SUBSCRIBER_COLUMNS = [
  'id', 'environment_id', 'organization_id', 'subscriber_id', 'first_name', 'last_name', 'email', 'phone', 'avatar', 'locale',
  'timezone', 'data', 'channels', 'topics', 'is_online', 'last_online_at', 'version', 'deleted', 'created_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof SubscribersTable>;

export class SqlSubscriberRepository implements SubscriberRepository {
  /**
   * PostgreSQL, outside a transaction: `findBySubscriberId`s made while one is in flight (the worker's concurrent
   * jobs each resolve their recipient) wait for it and go out together as one statement (subscribersBySubscriberIdsPg).
   * A read waits only for the one in flight, so it still runs after it was asked for.
   */
  private readonly bySubscriberId?: CoalescedBatches<{ environmentId: string; subscriberId: string }, Subscriber | undefined>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {
    if (options.dialect === 'postgres' && !db.isTransaction) {
      this.bySubscriberId = new CoalescedBatches((keys) => this.findBySubscriberIds(keys), MAX_READ_BATCH);
    }
  }

  /** Throws ConflictError when a non-deleted subscriber of the environment already has this subscriberId. */
  async create(subscriber: Subscriber): Promise<Subscriber | undefined> {
    const row = toRow(subscriber);
    const result = await insertSubscriber.execute(this.db, this.options.dialect, [row]);
    if (Number(result.numAffectedRows ?? 0n) === 0) {
      throw new ConflictError(`Subscriber with subscriberId ${subscriber.subscriberId} already exists`);
    }
    return storedForm(row);
  }

  /**
   * `create`'s insert, not executed (to be combined with others, see `oneStatement`): without ON CONFLICT, so a
   * subscriberId taken meanwhile fails the statement it is part of (a unique violation) instead of being skipped.
   */
  createStatement(subscriber: Subscriber): { statement: CompiledQuery<unknown>; stored: Subscriber | undefined } {
    const row = toRow(subscriber);
    return { statement: insertNewSubscriber.compile(this.db, this.options.dialect, [row]), stored: storedForm(row) };
  }

  async get(environmentId: string, id: string): Promise<Subscriber | undefined> {
    const [row] = (await subscriberById.execute(this.db, this.options.dialect, { environmentId, id })).rows;
    return row && toSubscriber(row);
  }

  async findBySubscriberId(environmentId: string, subscriberId: string): Promise<Subscriber | undefined> {
    if (this.bySubscriberId) return this.bySubscriberId.run({ environmentId, subscriberId });
    return this.findOneBySubscriberId(environmentId, subscriberId);
  }

  private async findOneBySubscriberId(environmentId: string, subscriberId: string): Promise<Subscriber | undefined> {
    const [row] = (await subscriberBySubscriberId.execute(this.db, this.options.dialect, { environmentId, subscriberId })).rows;
    return row && toSubscriber(row);
  }

  /** One batch of findBySubscriberId: alone as before, or several in one statement. */
  private async findBySubscriberIds(
    keys: Array<{ environmentId: string; subscriberId: string }>,
  ): Promise<Array<PromiseSettledResult<Subscriber | undefined>>> {
    if (keys.length === 1) return Promise.allSettled([this.findOneBySubscriberId(keys[0]!.environmentId, keys[0]!.subscriberId)]);
    markPrepared(SUBSCRIBERS_BY_SUBSCRIBER_IDS_PG);
    const query = CompiledQuery.raw(SUBSCRIBERS_BY_SUBSCRIBER_IDS_PG, [keys.map((key) => key.environmentId), keys.map((key) => key.subscriberId)]);
    const { rows } = await this.db.executeQuery<SubscriberRow>(query);
    const found = new Map(rows.map((row) => [`${row.environment_id}\u0000${row.subscriber_id}`, row]));
    return keys.map((key) => {
      const row = found.get(`${key.environmentId}\u0000${key.subscriberId}`);
      return { status: 'fulfilled', value: row && toSubscriber(row) };
    });
  }

  async findManyBySubscriberIds(environmentId: string, subscriberIds: string[]): Promise<Subscriber[]> {
    const result: Subscriber[] = [];
    for (const chunk of chunks([...new Set(subscriberIds)], 500)) {
      const rows = await this.db
        .selectFrom('subscribers')
        .selectAll()
        .where('environment_id', '=', environmentId)
        .where('subscriber_id', 'in', chunk)
        .where('deleted', '=', NOT_DELETED)
        .execute();
      result.push(...rows.map(toSubscriber));
    }
    return result;
  }

  async getMany(environmentId: string, ids: string[]): Promise<Subscriber[]> {
    const result: Subscriber[] = [];
    const unique = [...new Set(ids)];
    if (unique.length === 0) return result;
    for (const statement of subscribersByIdsStatements(this.db, this.options.dialect, environmentId, unique)) {
      const { rows } = await this.db.executeQuery(statement);
      for (const row of rows) result.push(toSubscriber(row));
    }
    return result;
  }

  async save(subscriber: Subscriber): Promise<void> {
    const { id: _id, environment_id: _env, organization_id: _org, created_at: _created, ...changes } = toRow(subscriber);
    await this.db
      .updateTable('subscribers')
      .set(changes)
      .where('environment_id', '=', subscriber._environmentId)
      .where('id', '=', subscriber._id)
      .execute();
  }

  async list(environmentId: string, filter: SubscriberListFilter): Promise<Page<Subscriber>> {
    const where = (eb: ExpressionBuilder<Database, 'subscribers'>) => {
      const conditions: Expression<SqlBool>[] = [eb('environment_id', '=', environmentId), eb('deleted', '=', NOT_DELETED)];
      if (filter.email !== undefined) conditions.push(eb(eb.fn('lower', ['email']), '=', filter.email.toLowerCase()));
      if (filter.subscriberId !== undefined) conditions.push(eb('subscriber_id', '=', filter.subscriberId));
      if (filter.phone !== undefined) conditions.push(eb('phone', '=', filter.phone));
      if (filter.name !== undefined) {
        const pattern = containsPattern(filter.name);
        conditions.push(
          eb.or([
            sql<boolean>`lower(first_name) like ${pattern} escape '\\'`,
            sql<boolean>`lower(last_name) like ${pattern} escape '\\'`,
            sql<boolean>`lower(first_name || ' ' || last_name) like ${pattern} escape '\\'`,
          ]),
        );
      }
      return eb.and(conditions);
    };
    const descending = filter.orderDirection !== 'ASC';
    // Walking backwards from a `before` cursor reads the opposite order, then flips the rows back.
    const backwards = filter.before !== undefined && filter.after === undefined;
    const readDescending = backwards ? !descending : descending;
    const cursor = filter.after ?? filter.before;
    let query = this.db.selectFrom('subscribers').selectAll().where(where);
    if (cursor) {
      const comparison = readDescending ? '<' : '>';
      query = query.where((eb) =>
        eb.or([
          eb('created_at', comparison, cursor.createdAt),
          eb.and([eb('created_at', '=', cursor.createdAt), eb('id', comparison, cursor.id)]),
        ]),
      );
    }
    const direction = readDescending ? 'desc' : 'asc';
    const rows = await query
      .orderBy('created_at', direction)
      .orderBy('id', direction)
      .limit(filter.limit + 1)
      .offset(cursor ? 0 : filter.page * filter.limit)
      .execute();
    const count = await this.db.selectFrom('subscribers').select((eb) => eb.fn.countAll<number | string>().as('n')).where(where).executeTakeFirstOrThrow();
    const pageRows = rows.slice(0, filter.limit);
    if (backwards) pageRows.reverse();
    return {
      data: pageRows.map(toSubscriber),
      page: filter.page,
      pageSize: filter.limit,
      hasMore: rows.length > filter.limit,
      totalCount: Number(count.n),
    };
  }

  async listIds(environmentId: string, afterId: string | undefined, limit: number): Promise<Array<{ _id: string; subscriberId: string }>> {
    let query = this.db
      .selectFrom('subscribers')
      .select(['id', 'subscriber_id'])
      .where('environment_id', '=', environmentId)
      .where('deleted', '=', NOT_DELETED);
    if (afterId !== undefined) query = query.where('id', '>', afterId);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map((row) => ({ _id: row.id, subscriberId: row.subscriber_id }));
  }

  async delete(environmentId: string, id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('subscribers')
      .set((eb) => ({ deleted: 1, updated_at: at, version: eb('version', '+', 1) }))
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .where('deleted', '=', NOT_DELETED)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    await this.db.deleteFrom('topic_subscriptions').where('environment_id', '=', environmentId).where('subscriber_id', '=', id).execute();
    await this.db.deleteFrom('subscriber_preferences').where('environment_id', '=', environmentId).where('subscriber_id', '=', id).execute();
    return true;
  }
}

/** A LIKE pattern matching `text` anywhere, case-insensitively (compare against lower(column)), wildcards escaped. */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

const TEXT_COLUMNS = ['subscriber_id', 'first_name', 'last_name', 'email', 'phone', 'avatar', 'locale', 'timezone', 'last_online_at', 'created_at', 'updated_at'] as const;

function toRow(subscriber: Subscriber): SubscriberRow {
  return {
    id: subscriber._id,
    environment_id: subscriber._environmentId,
    organization_id: subscriber._organizationId,
    subscriber_id: subscriber.subscriberId,
    first_name: subscriber.firstName ?? null,
    last_name: subscriber.lastName ?? null,
    email: subscriber.email ?? null,
    phone: subscriber.phone ?? null,
    avatar: subscriber.avatar ?? null,
    locale: subscriber.locale ?? null,
    timezone: subscriber.timezone ?? null,
    data: subscriber.data === undefined || subscriber.data === null ? null : toJson(subscriber.data),
    channels: toJson(subscriber.channels ?? []),
    topics: toJson(subscriber.topics ?? []),
    is_online: subscriber.isOnline === undefined || subscriber.isOnline === null ? null : toFlag(subscriber.isOnline),
    last_online_at: subscriber.lastOnlineAt ?? null,
    version: subscriber.__v,
    deleted: toFlag(subscriber.deleted),
    created_at: subscriber.createdAt,
    updated_at: subscriber.updatedAt,
  };
}

export function toSubscriber(row: SubscriberRow): Subscriber {
  return {
    _id: row.id,
    _organizationId: row.organization_id,
    _environmentId: row.environment_id,
    subscriberId: row.subscriber_id,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phone: row.phone,
    avatar: row.avatar,
    locale: row.locale,
    timezone: row.timezone,
    channels: fromJson(row.channels, []),
    topics: fromJson(row.topics, []),
    isOnline: row.is_online === null ? null : fromFlag(row.is_online),
    lastOnlineAt: row.last_online_at,
    __v: Number(row.version),
    data: fromJson<Record<string, unknown> | null>(row.data, null),
    deleted: fromFlag(row.deleted),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** At most this many subscribers read by one statement. */
const MAX_READ_BATCH = 100;
/**
 * PostgreSQL: the live subscribers of any number of (environment, subscriberId) pairs, one text (prepared once), one
 * look-up per pair (OFFSET 0 keeps each from being merged into a join), as subscriberBySubscriberId. Its generic plan
 * probes the unique index at any table size since migration 0037 (session 19 undid this batch because, with
 * subscribers_env_email still there, the plan made at a few hundred rows walked the environment per key;
 * test/store/postgres/subscriber-read-plans.test.ts).
 */
const SUBSCRIBERS_BY_SUBSCRIBER_IDS_PG =
  'select s.* from unnest($1::text[], $2::text[]) as k(environment_id, subscriber_id) cross join lateral ' +
  '(select * from "subscribers" where "environment_id" = k.environment_id and "subscriber_id" = k.subscriber_id and "deleted" = 0 offset 0) as s';

// The statements of the trigger path, compiled once (see ReusableQuery).
const insertSubscriber = new ReusableInsert('subscribers', (query) =>
  // The unique index is partial (non-deleted rows); the conflict target must repeat its predicate literally.
  query.onConflict((oc) => oc.columns(['environment_id', 'subscriber_id']).where(sql<boolean>`deleted = 0`).doNothing()),
);
const insertNewSubscriber = new ReusableInsert('subscribers');

/** The row as `get` reads it back, unless a text column was given another type (the database would convert it). */
function storedForm(row: ReturnType<typeof toRow>): Subscriber | undefined {
  return TEXT_COLUMNS.every((column) => row[column] === null || typeof row[column] === 'string') ? toSubscriber(row) : undefined;
}
/**
 * getMany's statements for distinct `ids`: one for a page's one or few subscribers (compiled once per count, see
 * ReusableQuery), otherwise one per 500. Also run inside the messages page's synchronous block (listStored).
 */
export function subscribersByIdsStatements(db: Kysely<Database>, dialect: SqlStoreOptions['dialect'], environmentId: string, ids: string[]): Array<CompiledQuery<SubscriberRow>> {
  if (ids.length <= SUBSCRIBERS_BY_IDS_COMPILED) {
    const params: Record<string, unknown> = { environmentId };
    ids.forEach((id, index) => (params[`id${index}`] = id));
    return [subscribersByIds.compile(db, dialect, params) as CompiledQuery<SubscriberRow>];
  }
  return [...chunks(ids, 500)].map((chunk) => db.selectFrom('subscribers').selectAll().where('id', 'in', chunk).where(environmentIs(environmentId)).compile());
}
/** Ids up to which getMany's statement is compiled once per count. */
const SUBSCRIBERS_BY_IDS_COMPILED = 20;
/** getMany's statement for `id0`, `id1`, ... (as many as given). */
const subscribersByIds = new ReusableQuery((db, p: Record<string, unknown>) => {
  const ids: string[] = [];
  for (let index = 0; `id${index}` in p; index++) ids.push(p[`id${index}`] as string);
  return db.selectFrom('subscribers').selectAll().where('id', 'in', ids).where(environmentIs(p.environmentId as string));
});
const subscriberById = new ReusableQuery((db, p: { environmentId: string; id: string }) =>
  db.selectFrom('subscribers').selectAll().where('environment_id', '=', p.environmentId).where('id', '=', p.id).where('deleted', '=', NOT_DELETED),
);
const subscriberBySubscriberId = new ReusableQuery((db, p: { environmentId: string; subscriberId: string }) =>
  db
    .selectFrom('subscribers')
    .selectAll()
    .where('environment_id', '=', p.environmentId)
    .where('subscriber_id', '=', p.subscriberId)
    .where('deleted', '=', NOT_DELETED),
);
