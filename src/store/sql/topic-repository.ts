import { sql, type Kysely, type Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.js';
import type { Topic, TopicSubscription } from '../../domain/types.js';
import type { TopicRepository } from '../ports.js';
import type { Database, TopicsTable, TopicSubscriptionsTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { escapeLike, isUniqueViolation } from './workflow-repository.js';

/**
 * Topics and their subscriptions. A subscription row carries the topic key and the external subscriberId
 * beside the internal ids, so trigger fan-out and listings need no join.
 */
export class SqlTopicRepository implements TopicRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {}

  /** Throws ConflictError when the environment already has a topic with this key. */
  async create(topic: Topic): Promise<void> {
    try {
      await this.db
        .insertInto('topics')
        .values({
          id: topic._id,
          environment_id: topic._environmentId,
          organization_id: topic._organizationId,
          key: topic.key,
          name: topic.name ?? null,
          created_at: topic.createdAt,
          updated_at: topic.updatedAt,
        })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(`Topic with key ${topic.key} already exists`);
      throw error;
    }
  }

  async getByKey(environmentId: string, key: string): Promise<Topic | undefined> {
    const row = await this.db
      .selectFrom('topics')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('key', '=', key)
      .executeTakeFirst();
    return row && toTopic(row);
  }

  /** Oldest first; `key` is an exact match, `name` a case-insensitive substring match. */
  async list(
    environmentId: string,
    filter: { key?: string; name?: string; offset: number; limit: number },
  ): Promise<{ topics: Topic[]; totalCount: number }> {
    let query = this.db.selectFrom('topics').where('environment_id', '=', environmentId);
    if (filter.key !== undefined) query = query.where('key', '=', filter.key);
    if (filter.name !== undefined) {
      query = query.where(sql<boolean>`lower(name) like lower(${`%${escapeLike(filter.name)}%`}) escape '\\'`);
    }
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('created_at').orderBy('id').limit(filter.limit).offset(filter.offset).execute(),
      query.select((eb) => eb.fn.countAll<string | number>().as('count')).executeTakeFirstOrThrow(),
    ]);
    return { topics: rows.map(toTopic), totalCount: Number(count.count) };
  }

  /** Updates name and updatedAt; matched by environment and `_id`. */
  async save(topic: Topic): Promise<void> {
    await this.db
      .updateTable('topics')
      .set({ name: topic.name ?? null, updated_at: topic.updatedAt })
      .where('environment_id', '=', topic._environmentId)
      .where('id', '=', topic._id)
      .execute();
  }

  /** Deletes the topic and its subscriptions (a topic has no soft-delete state). */
  async delete(environmentId: string, topicId: string): Promise<void> {
    await this.db
      .deleteFrom('topic_subscriptions')
      .where('environment_id', '=', environmentId)
      .where('topic_id', '=', topicId)
      .execute();
    await this.db.deleteFrom('topics').where('environment_id', '=', environmentId).where('id', '=', topicId).execute();
  }

  /** Adds subscriptions; an existing (topic, subscriber) pair is kept and returned as it was. Input order is kept. */
  async addSubscriptions(subscriptions: TopicSubscription[]): Promise<TopicSubscription[]> {
    if (subscriptions.length === 0) return [];
    await this.db
      .insertInto('topic_subscriptions')
      .values(
        subscriptions.map((s) => ({
          id: s._id,
          environment_id: s._environmentId,
          topic_id: s._topicId,
          topic_key: s.topicKey,
          subscriber_id: s._subscriberId,
          external_subscriber_id: s.subscriberId,
          created_at: s.createdAt,
        })),
      )
      .onConflict((oc) => oc.columns(['topic_id', 'subscriber_id']).doNothing())
      .execute();
    const rows = await this.db
      .selectFrom('topic_subscriptions')
      .selectAll()
      .where('environment_id', '=', subscriptions[0]._environmentId)
      .where(
        'topic_id',
        'in',
        [...new Set(subscriptions.map((s) => s._topicId))],
      )
      .where('subscriber_id', 'in', subscriptions.map((s) => s._subscriberId))
      .execute();
    const byPair = new Map(rows.map((row) => [`${row.topic_id}/${row.subscriber_id}`, toSubscription(row)]));
    return subscriptions.flatMap((s) => byPair.get(`${s._topicId}/${s._subscriberId}`) ?? []);
  }

  async removeSubscriptions(environmentId: string, topicId: string, subscriberInternalIds: string[]): Promise<number> {
    if (subscriberInternalIds.length === 0) return 0;
    const result = await this.db
      .deleteFrom('topic_subscriptions')
      .where('environment_id', '=', environmentId)
      .where('topic_id', '=', topicId)
      .where('subscriber_id', 'in', subscriberInternalIds)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** In id order (creation order), after the cursor `afterId`. */
  async listSubscriptions(environmentId: string, topicId: string, filter: { afterId?: string; limit: number }): Promise<TopicSubscription[]> {
    let query = this.db
      .selectFrom('topic_subscriptions')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('topic_id', '=', topicId);
    if (filter.afterId) query = query.where('id', '>', filter.afterId);
    const rows = await query.orderBy('id').limit(filter.limit).execute();
    return rows.map(toSubscription);
  }

  async findSubscriptions(environmentId: string, topicId: string, subscriberInternalIds: string[]): Promise<TopicSubscription[]> {
    if (subscriberInternalIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('topic_subscriptions')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('topic_id', '=', topicId)
      .where('subscriber_id', 'in', subscriberInternalIds)
      .orderBy('id')
      .execute();
    return rows.map(toSubscription);
  }

  async countSubscriptions(environmentId: string, topicId: string): Promise<number> {
    const row = await this.db
      .selectFrom('topic_subscriptions')
      .select((eb) => eb.fn.countAll<string | number>().as('count'))
      .where('environment_id', '=', environmentId)
      .where('topic_id', '=', topicId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** By the topic_subscriptions_subscriber index (environment_id, subscriber_id); the topic joined by its id. */
  async listSubscriberSubscriptions(
    environmentId: string,
    subscriberInternalId: string,
    filter: { afterId?: string; limit: number; topicKey?: string; descending?: boolean },
  ): Promise<Array<{ subscription: TopicSubscription; topic: Topic }>> {
    let query = this.db
      .selectFrom('topic_subscriptions as s')
      .innerJoin('topics as t', 't.id', 's.topic_id')
      .selectAll('s')
      .select(['t.organization_id as topic_organization_id', 't.name as topic_name', 't.created_at as topic_created_at', 't.updated_at as topic_updated_at'])
      .where('s.environment_id', '=', environmentId)
      .where('s.subscriber_id', '=', subscriberInternalId);
    if (filter.topicKey !== undefined) query = query.where('s.topic_key', '=', filter.topicKey);
    if (filter.afterId) query = query.where('s.id', filter.descending ? '<' : '>', filter.afterId);
    const rows = await query.orderBy('s.id', filter.descending ? 'desc' : 'asc').limit(filter.limit).execute();
    return rows.map((row) => ({
      subscription: toSubscription(row),
      topic: toTopic({
        id: row.topic_id,
        environment_id: row.environment_id,
        organization_id: row.topic_organization_id,
        key: row.topic_key,
        name: row.topic_name,
        created_at: row.topic_created_at,
        updated_at: row.topic_updated_at,
      }),
    }));
  }

  async countSubscriberSubscriptions(environmentId: string, subscriberInternalId: string, filter: { topicKey?: string }): Promise<number> {
    let query = this.db
      .selectFrom('topic_subscriptions')
      .select((eb) => eb.fn.countAll<string | number>().as('count'))
      .where('environment_id', '=', environmentId)
      .where('subscriber_id', '=', subscriberInternalId);
    if (filter.topicKey !== undefined) query = query.where('topic_key', '=', filter.topicKey);
    const row = await query.executeTakeFirstOrThrow();
    return Number(row.count);
  }
}

function toTopic(row: Selectable<TopicsTable>): Topic {
  return {
    _id: row.id,
    _environmentId: row.environment_id,
    _organizationId: row.organization_id,
    key: row.key,
    ...(row.name !== null ? { name: row.name } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toSubscription(row: Selectable<TopicSubscriptionsTable>): TopicSubscription {
  return {
    _id: row.id,
    _environmentId: row.environment_id,
    _topicId: row.topic_id,
    topicKey: row.topic_key,
    _subscriberId: row.subscriber_id,
    subscriberId: row.external_subscriber_id,
    createdAt: row.created_at,
  };
}
