import { sql, type Kysely, type Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Workflow } from '../../domain/workflow.js';
import type { WorkflowListFilter, WorkflowRepository } from '../ports.js';
import type { Database, WorkflowsTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { fromJson, toFlag, toJson } from './json.js';
import { NOT_DELETED } from './live-rows.js';
import { ReusableQuery } from './reusable-query.js';

/**
 * Workflows are stored as one JSON document; the columns beside it (workflow_id, name, active, deleted)
 * exist for lookups, search and the per-environment uniqueness of workflowId among non-deleted rows.
 */
export class SqlWorkflowRepository implements WorkflowRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {}

  /** Throws ConflictError when a non-deleted workflow of the environment already has this workflowId. */
  async create(workflow: Workflow): Promise<void> {
    this.options.workflowCache?.forget(workflow._environmentId);
    try {
      await this.db.insertInto('workflows').values(toRow(workflow)).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateWorkflowId(workflow.workflowId);
      throw error;
    } finally {
      // After the write: a read that began before it (older answer) can no longer be kept.
      this.options.workflowCache?.forget(workflow._environmentId);
    }
  }

  async get(environmentId: string, idOrWorkflowId: string, options?: { shared?: boolean }): Promise<Workflow | undefined> {
    const cache = this.options.workflowCache;
    // Inside a transaction the read is the transaction's own (it may follow a write of it): never from the cache.
    if (cache && !this.db.isTransaction) return cache.get(environmentId, idOrWorkflowId, () => this.read(environmentId, idOrWorkflowId), options);
    return this.read(environmentId, idOrWorkflowId);
  }

  private async read(environmentId: string, idOrWorkflowId: string): Promise<Workflow | undefined> {
    const lookup = isRecordId(idOrWorkflowId) ? workflowByIdOrWorkflowId : workflowByWorkflowId;
    const [row] = (await lookup.execute(this.db, this.options.dialect, { environmentId, key: idOrWorkflowId })).rows;
    return row && toWorkflow(row);
  }

  /** Newest first; `query` matches name or workflowId case-insensitively. */
  async list(environmentId: string, filter: WorkflowListFilter): Promise<{ workflows: Workflow[]; totalCount: number }> {
    let query = this.db.selectFrom('workflows').where('environment_id', '=', environmentId).where('deleted', '=', NOT_DELETED);
    if (filter.query) {
      const pattern = `%${escapeLike(filter.query)}%`;
      query = query.where((eb) =>
        eb.or([
          sql<boolean>`lower(name) like lower(${pattern}) escape '\\'`,
          sql<boolean>`lower(workflow_id) like lower(${pattern}) escape '\\'`,
        ]),
      );
    }
    const [rows, count] = await Promise.all([
      query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
      query.select((eb) => eb.fn.countAll<string | number>().as('count')).executeTakeFirstOrThrow(),
    ]);
    return { workflows: rows.map(toWorkflow), totalCount: Number(count.count) };
  }

  /** Replaces the stored document (soft delete is a save with `deleted: true`); matched by environment and `_id`. */
  async save(workflow: Workflow): Promise<void> {
    const { id: _id, environment_id: _env, organization_id: _org, created_at: _created, ...changes } = toRow(workflow);
    this.options.workflowCache?.forget(workflow._environmentId);
    try {
      await this.db
        .updateTable('workflows')
        .set(changes)
        .where('environment_id', '=', workflow._environmentId)
        .where('id', '=', workflow._id)
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateWorkflowId(workflow.workflowId);
      throw error;
    } finally {
      this.options.workflowCache?.forget(workflow._environmentId);
    }
  }
}

function duplicateWorkflowId(workflowId: string): ConflictError {
  return new ConflictError(`Workflow with workflowId ${workflowId} already exists`);
}

/** Escapes LIKE wildcards so a search term matches literally (used with `escape '\\'`). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** True for a unique-constraint failure on SQLite (better-sqlite3) or PostgreSQL (pg, SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

function toRow(workflow: Workflow): WorkflowsTable {
  return {
    id: workflow._id,
    environment_id: workflow._environmentId,
    organization_id: workflow._organizationId,
    workflow_id: workflow.workflowId,
    name: workflow.name,
    document: toJson(workflow),
    active: toFlag(workflow.active),
    deleted: toFlag(workflow.deleted),
    created_at: workflow.createdAt,
    updated_at: workflow.updatedAt,
    origin: workflow.origin === 'external' ? 'external' : null,
  };
}

function toWorkflow(row: Selectable<WorkflowsTable>): Workflow {
  return fromJson<Workflow>(row.document, {} as Workflow);
}

// The lookups of every trigger, compiled once (see ReusableQuery).
const workflowByWorkflowId = new ReusableQuery((db, p: { environmentId: string; key: string }) =>
  db.selectFrom('workflows').selectAll().where('environment_id', '=', p.environmentId).where('deleted', '=', NOT_DELETED).where('workflow_id', '=', p.key),
);
const workflowByIdOrWorkflowId = new ReusableQuery((db, p: { environmentId: string; key: string }) =>
  db
    .selectFrom('workflows')
    .selectAll()
    .where('environment_id', '=', p.environmentId)
    .where('deleted', '=', NOT_DELETED)
    .where((eb) => eb.or([eb('id', '=', p.key), eb('workflow_id', '=', p.key)]))
    // An _id match wins over a workflowId that happens to look like an id.
    .orderBy(sql`case when id = ${p.key} then 0 else 1 end`)
    .limit(1),
);
