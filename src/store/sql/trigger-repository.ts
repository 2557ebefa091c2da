import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
import type { JobStatus } from '../../domain/types.js';
import type { JobRef, TriggerRecord, TriggerRepository } from '../ports.js';
import { fromJson, toJson } from './json.js';
import type { Database, TriggersTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { environmentIs } from './plan-hints.js';
import { ReusableInsert, ReusableQuery } from './reusable-query.js';
import { markPrepared } from '../postgres/prepared-statements.js';
import { CoalescedBatches } from '../coalesced-batches.js';

type TriggerRow = Selectable<TriggersTable>;

/** Accepted triggers: the durable record that a 201 was given, unique per (environment, transactionId). */
export class SqlTriggerRepository implements TriggerRepository {
  /**
   * PostgreSQL, outside a transaction: the inserts of concurrent triggers (other requests of this process) that arrive
   * while one is in flight go out together as one statement (see insertTriggersPg), as SQLite's group commit shares
   * one commit between them. A trigger arriving alone goes out at once, alone, as before.
   */
  private readonly inserts?: CoalescedBatches<TriggerRow, boolean>;
  /**
   * PostgreSQL, outside a transaction: `get`s made while one is in flight (the worker's concurrent jobs each start
   * with their trigger) wait for it and go out together as one statement (triggersByIdsPg): one round trip, one socket
   * write of the worker, for a batch. A read waits only for the one in flight, so it still runs after it was asked
   * for and sees every write committed before.
   */
  private readonly reads?: CoalescedBatches<{ environmentId: string; id: string }, TriggerRecord | undefined>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
    inTransaction = false,
  ) {
    if (options.dialect === 'postgres' && !inTransaction) {
      this.inserts = new CoalescedBatches((rows) => this.insertMany(rows), MAX_INSERT_BATCH);
      this.reads = new CoalescedBatches((keys) => this.getMany(keys), MAX_READ_BATCH);
    }
  }

  async create(trigger: TriggerRecord): Promise<{ trigger: TriggerRecord; created: boolean }> {
    const row = toRow(trigger);
    const created = this.inserts ? await this.inserts.run(row) : await this.insertOne(row);
    if (created) return { trigger, created: true };
    const existing = await this.findByTransactionId(trigger.environmentId, trigger.transactionId);
    if (!existing) throw new Error('trigger insert conflicted but no trigger holds the transactionId');
    return { trigger: existing, created: false };
  }

  /** Whether the row was inserted (false: its transactionId was taken). */
  private async insertOne(row: TriggerRow): Promise<boolean> {
    const result = await insertTrigger.execute(this.db, this.options.dialect, [row]);
    return Number(result.numAffectedRows ?? 0n) > 0;
  }

  /**
   * One statement for a batch; a batch that fails as a whole (one row PostgreSQL refuses, such as a transactionId
   * holding a NUL character) is tried again row by row, so only that row's caller gets the error.
   */
  private async insertMany(rows: TriggerRow[]): Promise<Array<PromiseSettledResult<boolean>>> {
    if (rows.length > 1) {
      try {
        const { rows: inserted } = await this.db.executeQuery<{ id: string }>(insertTriggersPg(rows));
        const ids = new Set(inserted.map((row) => row.id));
        return rows.map((row) => ({ status: 'fulfilled', value: ids.has(row.id) }));
      } catch {
        // Row by row below.
      }
    }
    return Promise.allSettled(rows.map((row) => this.insertOne(row)));
  }

  async get(environmentId: string, id: string): Promise<TriggerRecord | undefined> {
    if (this.reads) return this.reads.run({ environmentId, id });
    return this.getOne(environmentId, id);
  }

  private async getOne(environmentId: string, id: string): Promise<TriggerRecord | undefined> {
    const [row] = (await triggerById.execute(this.db, this.options.dialect, { environmentId, id })).rows;
    return row && toRecord(row);
  }

  /** One batch of `get`s: alone as before, or several in one statement, each row checked for its environment. */
  private async getMany(keys: Array<{ environmentId: string; id: string }>): Promise<Array<PromiseSettledResult<TriggerRecord | undefined>>> {
    if (keys.length === 1) return Promise.allSettled([this.getOne(keys[0]!.environmentId, keys[0]!.id)]);
    markPrepared(TRIGGERS_BY_IDS_PG);
    const { rows } = await this.db.executeQuery<TriggerRow>(CompiledQuery.raw(TRIGGERS_BY_IDS_PG, [keys.map((key) => key.id)]));
    const byId = new Map(rows.map((row) => [row.id, row]));
    return keys.map((key) => {
      const row = byId.get(key.id);
      return { status: 'fulfilled', value: row && row.environment_id === key.environmentId ? toRecord(row) : undefined };
    });
  }

  async findByTransactionId(environmentId: string, transactionId: string): Promise<TriggerRecord | undefined> {
    const row = await this.db
      .selectFrom('triggers')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('transaction_id', '=', transactionId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async setState(environmentId: string, id: string, state: TriggerRecord['state'], error?: string): Promise<void> {
    await this.db.executeQuery(this.setStateStatement(environmentId, id, state, error));
  }

  /** The update of `setState`, not executed (the held writes of `SqlStore.batch` combine it with others). */
  setStateStatement(environmentId: string, id: string, state: TriggerRecord['state'], error?: string): CompiledQuery<unknown> {
    return setTriggerState.compile(this.db, this.options.dialect, { state, error: error ?? null, updatedAt: new Date().toISOString(), environmentId, id });
  }

  async listStale(before: string, limit: number): Promise<TriggerRecord[]> {
    const rows = await this.db
      .selectFrom('triggers')
      .selectAll()
      // A literal, as the partial index triggers_accepted states it (SQLite uses it for no bound parameter).
      .where('state', '=', sql.lit('accepted'))
      .where('created_at', '<', before)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map(toRecord);
  }

  async listJobsInGroup(environmentId: string, digestGroup: string, statuses: JobStatus[]): Promise<JobRef[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db
      .selectFrom('jobs')
      .select(['id', 'notification_id', 'status', 'created_at', 'updated_at'])
      .where('digest_group', '=', digestGroup)
      .where('status', 'in', statuses)
      .where('environment_id', '=', environmentId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toJobRef);
  }

  async listJobsOfTransaction(environmentId: string, transactionId: string, statuses: JobStatus[]): Promise<JobRef[]> {
    if (statuses.length === 0) return [];
    // Through the transaction's events: jobs have no index of their own by transaction (each one cost every job insert
    // a page write, for a lookup that only cancel makes).
    const rows = await this.db
      .selectFrom('notifications')
      .innerJoin('jobs', 'jobs.notification_id', 'notifications.id')
      .select(['jobs.id', 'jobs.notification_id', 'jobs.status', 'jobs.created_at', 'jobs.updated_at'])
      .where('notifications.environment_id', '=', environmentId)
      .where('notifications.transaction_id', '=', transactionId)
      .where('jobs.environment_id', '=', environmentId)
      .where('jobs.status', 'in', statuses)
      .orderBy('jobs.created_at')
      .orderBy('jobs.id')
      .execute();
    return rows.map(toJobRef);
  }
}

function toRow(trigger: TriggerRecord): TriggerRow {
  return {
    id: trigger._id,
    environment_id: trigger.environmentId,
    organization_id: trigger.organizationId,
    transaction_id: trigger.transactionId,
    workflow_id: trigger.workflowId,
    request: toJson(trigger.request),
    state: trigger.state,
    error: trigger.error ?? null,
    created_at: trigger.createdAt,
    updated_at: trigger.updatedAt,
  };
}

function toRecord(row: TriggerRow): TriggerRecord {
  const record: TriggerRecord = {
    _id: row.id,
    environmentId: row.environment_id,
    organizationId: row.organization_id,
    transactionId: row.transaction_id,
    workflowId: row.workflow_id,
    request: fromJson<Record<string, unknown>>(row.request, {}),
    state: row.state as TriggerRecord['state'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.error !== null) record.error = row.error;
  return record;
}

function toJobRef(row: { id: string; notification_id: string; status: string; created_at: string; updated_at: string }): JobRef {
  return {
    _id: row.id,
    _notificationId: row.notification_id,
    status: row.status as JobStatus,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** At most this many triggers in one insert statement. */
const MAX_INSERT_BATCH = 100;
const COLUMNS = ['id', 'environment_id', 'organization_id', 'transaction_id', 'workflow_id', 'request', 'state', 'error', 'created_at', 'updated_at'] as const;
/**
 * PostgreSQL: any number of triggers in one statement of one text, one array per column, so it is prepared once
 * (a VALUES list would be a new statement per row count). A transactionId already used, by an earlier trigger or an
 * earlier row of the same statement, inserts nothing for that row (DO NOTHING) and leaves its id out of RETURNING.
 */
const INSERT_TRIGGERS_PG =
  `insert into "triggers" (${COLUMNS.map((column) => `"${column}"`).join(', ')}) ` +
  `select * from unnest(${COLUMNS.map((_, index) => `$${index + 1}::text[]`).join(', ')}) ` +
  'on conflict ("environment_id", "transaction_id") do nothing returning "id"';

function insertTriggersPg(rows: TriggerRow[]): CompiledQuery<{ id: string }> {
  markPrepared(INSERT_TRIGGERS_PG);
  return CompiledQuery.raw(INSERT_TRIGGERS_PG, COLUMNS.map((column) => rows.map((row) => row[column])));
}

/** At most this many triggers read by one statement. */
const MAX_READ_BATCH = 100;
/**
 * PostgreSQL: the triggers of any number of ids, one text (prepared once). One probe of the primary key per id,
 * whatever the plan: the subquery per id (OFFSET 0 keeps it from being merged into a join) can only be an index scan
 * or a scan of the table for that one id, and one probe is always cheaper than the table's ten-page floor, where a
 * generic plan of `id = any($1)` (an array of unknown length) could settle on a scan (BENCHMARKS.md, sessions 14, 18).
 */
const TRIGGERS_BY_IDS_PG = 'select t.* from unnest($1::text[]) as k(id) cross join lateral (select * from "triggers" where "id" = k.id offset 0) as t';

// The statements of the trigger path, compiled once (see ReusableQuery).
const insertTrigger = new ReusableInsert('triggers', (query) => query.onConflict((oc) => oc.columns(['environment_id', 'transaction_id']).doNothing()));
/**
 * By the primary key only (see environmentIs): a prepared statement's generic plan, made by PostgreSQL while the table
 * was small and had no statistics, could take `triggers_transaction_unique (environment_id, transaction_id)` for
 * `environment_id = ?` and filter every trigger of the environment by id, for as long as the connection lived
 * (BENCHMARKS.md, session 14).
 */
const triggerById = new ReusableQuery((db, p: { environmentId: string; id: string }) =>
  db.selectFrom('triggers').selectAll().where(environmentIs(p.environmentId)).where('id', '=', p.id),
);
const setTriggerState = new ReusableQuery(
  (db, p: { state: TriggerRecord['state']; error: string | null; updatedAt: string; environmentId: string; id: string }) =>
    db
      .updateTable('triggers')
      .set({ state: p.state, error: p.error, updated_at: p.updatedAt })
      // By the primary key only, as triggerById.
      .where(environmentIs(p.environmentId))
      .where('id', '=', p.id),
);
