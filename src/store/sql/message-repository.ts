import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { normalizeContextKeys } from '../../domain/context-keys.js';
import type { MarkAs, Message, Page } from '../../domain/types.js';
import type { MessageListFilter, MessageRepository } from '../ports.js';
import { fromFlag, fromJson, toFlag, toJson } from './json.js';
import type { Database, MessagesTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { chunks } from './subscriber-repository.js';

type MessageRow = Selectable<MessagesTable>;

/** Rows per multi-row INSERT: 18 columns each stays well under the databases' bound-parameter limits. */
const INSERT_BATCH = 200;

/** Message fields held in columns; everything else lives in the JSON document. */
const COLUMN_FIELDS = [
  '_id', '_environmentId', '_organizationId', '_notificationId', '_subscriberId', '_jobId', '_templateId',
  'transactionId', 'channel', 'read', 'seen', 'status', 'deleted', 'createdAt', 'updatedAt', 'subscriber',
] as const;

export class SqlMessageRepository implements MessageRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {}

  async create(message: Message): Promise<{ message: Message; created: boolean }> {
    const externalSubscriberId = message.subscriber?.subscriberId ?? (await this.externalSubscriberId(message));
    const result = await this.db
      .insertInto('messages')
      .values(toRow(message, externalSubscriberId))
      .onConflict((oc) => oc.column('job_id').doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0n) > 0 || !message._jobId) return { message, created: true };
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
    for (const batch of chunks(messages, INSERT_BATCH)) {
      const rows = batch.map((message) => {
        const externalId = message.subscriber?.subscriberId ?? externalIds.get(message._subscriberId);
        if (externalId === undefined) throw new Error(`message ${message._id}: subscriber ${message._subscriberId} does not exist`);
        return toRow(message, externalId);
      });
      await this.db.insertInto('messages').values(rows).onConflict((oc) => oc.column('job_id').doNothing()).execute();
    }
  }

  async get(environmentId: string, id: string): Promise<Message | undefined> {
    const row = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .where('deleted', '=', 0)
      .executeTakeFirst();
    return row && toMessage(row);
  }

  /** Deleted messages included: a deleted message must not be produced again by a rerun of its step. */
  async findByJobId(environmentId: string, jobId: string): Promise<Message | undefined> {
    const row = await this.db
      .selectFrom('messages')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('job_id', '=', jobId)
      .executeTakeFirst();
    return row && toMessage(row);
  }

  async list(environmentId: string, filter: MessageListFilter): Promise<Page<Message>> {
    const where = (eb: ExpressionBuilder<Database, 'messages'>) => {
      const conditions = [eb('environment_id', '=', environmentId), eb('deleted', '=', 0)];
      if (filter.channel !== undefined) conditions.push(eb('channel', '=', filter.channel));
      if (filter.subscriberId !== undefined) conditions.push(eb('external_subscriber_id', '=', filter.subscriberId));
      if (filter.transactionIds !== undefined && filter.transactionIds.length > 0) {
        conditions.push(eb('transaction_id', 'in', filter.transactionIds));
      }
      if (filter.contextKeys !== undefined) conditions.push(eb('context_keys_norm', '=', normalizeContextKeys(filter.contextKeys)));
      if (filter.read !== undefined) conditions.push(eb('read', '=', toFlag(filter.read)));
      if (filter.seen !== undefined) conditions.push(eb('seen', '=', toFlag(filter.seen)));
      return eb.and(conditions);
    };
    const rows = await this.db
      .selectFrom('messages')
      .selectAll()
      .where(where)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit + 1)
      .offset(filter.page * filter.limit)
      .execute();
    const count = await this.db.selectFrom('messages').select((eb) => eb.fn.countAll<number | string>().as('n')).where(where).executeTakeFirstOrThrow();
    return {
      data: rows.slice(0, filter.limit).map(toMessage),
      page: filter.page,
      pageSize: filter.limit,
      hasMore: rows.length > filter.limit,
      totalCount: Number(count.n),
    };
  }

  async findInAppForSubscriber(environmentId: string, subscriberInternalId: string, ids: string[]): Promise<Message[]> {
    const found: Message[] = [];
    for (const chunk of chunks([...new Set(ids)], 500)) {
      const rows = await this.db
        .selectFrom('messages')
        .selectAll()
        .where('environment_id', '=', environmentId)
        .where('subscriber_id', '=', subscriberInternalId)
        .where('channel', '=', 'in_app')
        .where('deleted', '=', 0)
        .where('id', 'in', chunk)
        .execute();
      found.push(...rows.map(toMessage));
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
        .where('environment_id', '=', environmentId)
        .where('id', 'in', chunk)
        .where('deleted', '=', 0)
        .execute();
      for (const row of rows) {
        const message = applyMarkAs(toMessage(row), markAs, at);
        await this.save(message);
        updated.set(message._id, message);
      }
    }
    return ids.flatMap((id) => (updated.has(id) ? [updated.get(id)!] : []));
  }

  async save(message: Message): Promise<void> {
    const row = toRow(message, '');
    await this.db
      .updateTable('messages')
      .set({
        read: row.read,
        seen: row.seen,
        status: row.status,
        channel: row.channel,
        context_keys_norm: row.context_keys_norm,
        deleted: row.deleted,
        document: row.document,
        updated_at: row.updated_at,
      })
      .where('environment_id', '=', message._environmentId)
      .where('id', '=', message._id)
      .execute();
  }

  async softDelete(environmentId: string, id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('messages')
      .set({ deleted: 1, updated_at: at })
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .where('deleted', '=', 0)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
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

/** `read` implies `seen`; the un- forms clear only their own flag; a date is stamped whenever its flag is set. */
export function applyMarkAs(message: Message, markAs: MarkAs, at: string): Message {
  const next: Message = { ...message, updatedAt: at };
  if (markAs === 'read') Object.assign(next, { read: true, seen: true, lastReadDate: at, lastSeenDate: at });
  if (markAs === 'seen') Object.assign(next, { seen: true, lastSeenDate: at });
  if (markAs === 'unread') next.read = false;
  if (markAs === 'unseen') next.seen = false;
  return next;
}

function toRow(message: Message, externalSubscriberId: string): MessageRow {
  const document: Record<string, unknown> = { ...message };
  for (const field of COLUMN_FIELDS) delete document[field];
  return {
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
  };
}

function toMessage(row: MessageRow): Message {
  const document = fromJson<Partial<Message>>(row.document, {});
  return {
    ...document,
    _id: row.id,
    _environmentId: row.environment_id,
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
    cta: document.cta ?? {},
    deleted: fromFlag(row.deleted),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
