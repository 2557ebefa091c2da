import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
import type { ExecutionDetail, Job } from '../../domain/types.js';
import type { JobRepository, StoredJob } from '../ports.js';
import { fromFlag, fromJson, toFlag, toJson } from './json.js';
import { environmentIs } from './plan-hints.js';
import type { Database, ExecutionDetailsTable, JobsTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { chunks } from './subscriber-repository.js';
import { oneStatement } from './one-statement.js';
import { ReusableInsert, ReusableQuery } from './reusable-query.js';
import { isOverviewChannel, recordStepOutcome, stepOutcomeStatementsFromMoved, type EndedStep } from './overview-repository.js';
import type { OverviewOutcome } from '../../domain/overview.js';

type JobRow = Selectable<JobsTable>;
type DetailRow = Selectable<ExecutionDetailsTable>;

/** Rows per multi-row INSERT: well under SQLite's and PostgreSQL's bound-parameter limits. */
const INSERT_BATCH = 200;

export class SqlJobRepository implements JobRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {}

  async createMany(jobs: StoredJob[]): Promise<void> {
    for (const statement of jobInsertStatements(this.db, this.options.dialect, jobs)) await this.db.executeQuery(statement);
  }

  async get(environmentId: string, id: string): Promise<StoredJob | undefined> {
    const [row] = (await jobById.execute(this.db, this.options.dialect, { environmentId, id })).rows;
    if (!row) return undefined;
    const details = (await detailsOfJob.execute(this.db, this.options.dialect, { notificationId: row.notification_id, jobId: id })).rows;
    return toStoredJob(row, details.map(toExecutionDetail));
  }

  async listForNotification(environmentId: string, notificationId: string): Promise<StoredJob[]> {
    return (await loadJobsWithDetails(this.db, environmentId, [notificationId])).get(notificationId) ?? [];
  }

  async save(job: StoredJob, detail?: ExecutionDetail): Promise<void> {
    const { id: _id, environment_id: _env, notification_id: _n, created_at: _c, ...changes } = toJobRow(job);
    const update = updateJob.compile(this.db, this.options.dialect, { ...changes, whereEnvironmentId: job._environmentId, whereId: job._id });
    const outcome = overviewOutcomeOf(job);
    if (outcome) {
      const { status: _status, ...rest } = changes;
      if (this.options.dialect === 'postgres') {
        await this.db.executeQuery(this.countedSaveStatement(job, outcome, changes, rest, detail));
        return;
      }
      const guarded = updateJobFromOtherStatus.compile(this.db, this.options.dialect, { ...rest, status: job.status, whereEnvironmentId: job._environmentId, whereId: job._id, whereStatusNot: job.status });
      await this.saveCounted(job, outcome, guarded, update, detail && insertDetails.compile(this.db, this.options.dialect, [toDetailRow(job, detail)]));
      return;
    }
    if (!detail) {
      await this.db.executeQuery(update);
      return;
    }
    const insert = insertDetails.compile(this.db, this.options.dialect, [toDetailRow(job, detail)]);
    if (this.options.dialect === 'postgres') {
      await this.db.executeQuery(oneStatement([update], insert));
      return;
    }
    const write = async (db: Kysely<Database>) => {
      await db.executeQuery(update);
      await db.executeQuery(insert);
    };
    await (this.db.isTransaction ? write(this.db) : this.db.transaction().execute(write));
  }

  async addDetail(job: Pick<StoredJob, '_id' | '_environmentId' | '_notificationId'>, detail: ExecutionDetail): Promise<void> {
    await insertDetails.execute(this.db, this.options.dialect, [toDetailRow(job, detail)]);
  }
  /**
   * PostgreSQL, the same as `saveCounted` in one statement (one round trip, no BEGIN/COMMIT): the guarded update
   * as the CTE `moved`, the execution detail, the counts inserted once per row of `moved`, and last the unguarded
   * update only when `moved` is empty (a rerun in the same final status). A concurrent save waits on the row lock,
   * finds the status already moved (its `moved` is empty) and writes its changes unguarded, counting nothing.
   */
  private countedSaveStatement(
    job: StoredJob,
    outcome: OverviewOutcome,
    changes: Omit<JobRow, 'id' | 'environment_id' | 'notification_id' | 'created_at'>,
    rest: Omit<JobRow, 'id' | 'environment_id' | 'notification_id' | 'created_at' | 'status'>,
    detail: ExecutionDetail | undefined,
  ): CompiledQuery<unknown> {
    const dialect = this.options.dialect;
    const moved = updateJobFromOtherStatusReturningId.compile(this.db, dialect, { ...rest, status: job.status, whereEnvironmentId: job._environmentId, whereId: job._id, whereStatusNot: job.status });
    const counts = stepOutcomeStatementsFromMoved(endedStepOf(job, outcome));
    const unmoved = updateJobUnlessMoved.compile(this.db, dialect, { ...changes, whereEnvironmentId: job._environmentId, whereId: job._id });
    return oneStatement(
      [{ name: 'moved', query: moved }, ...(detail ? [insertDetails.compile(this.db, dialect, [toDetailRow(job, detail)])] : []), ...counts],
      unmoved,
    );
  }

  /**
   * A channel step reaching its final status: the status moves first on its own, guarded by the previous status, so
   * only the transaction that really changed it adds to the overview's counts (a rerun or a concurrent save adds
   * nothing); the counts commit with the job.
   */
  private async saveCounted(
    job: StoredJob,
    outcome: OverviewOutcome,
    guarded: CompiledQuery<unknown>,
    update: CompiledQuery<unknown>,
    insert: CompiledQuery<unknown> | undefined,
  ): Promise<void> {
    const write = async (db: Kysely<Database>) => {
      // The whole update, only while the status is another one: one statement in the usual case; a save in the same
      // final status (a rerun) writes its other changes unguarded and counts nothing.
      const moved = await db.executeQuery(guarded);
      if (insert) await db.executeQuery(insert);
      if (Number(moved.numAffectedRows ?? 0) === 0) {
        await db.executeQuery(update);
        return;
      }
      await recordStepOutcome(db, this.options.dialect, endedStepOf(job, outcome));
    };
    await (this.db.isTransaction ? write(this.db) : this.db.transaction().execute(write));
  }
}

/** The overview outcome of a channel step's final status; undefined for other steps and statuses. */
export function overviewOutcomeOf(job: StoredJob): OverviewOutcome | undefined {
  if (!isOverviewChannel(job.type)) return undefined;
  if (job.status === 'completed') return 'sent';
  if (job.status === 'failed' || job.status === 'skipped') return job.status;
  return undefined;
}

/** The job, ended with `outcome` (its overviewOutcomeOf), as the overview's counts are keyed. */
export function endedStepOf(job: StoredJob, outcome: OverviewOutcome): EndedStep {
  return {
    jobId: job._id,
    environmentId: job._environmentId,
    channel: job.type,
    providerId: job.providerId ?? '',
    workflowId: job._templateId ?? '',
    outcome,
    createdAt: job.createdAt,
    endedAt: job.updatedAt ?? new Date().toISOString(),
  };
}

/**
 * The inserts of jobs and of their execution details, in multi-row statements of at most INSERT_BATCH rows. With
 * `readBack`, also the jobs as a read of those rows gives them back (the same row mapping both ways, details oldest
 * first as loadJobsWithDetails orders them), from the rows built for the inserts: for a text kept with the write.
 */
export function jobInsertStatements(db: Kysely<Database>, dialect: SqlStoreOptions['dialect'], jobs: StoredJob[], readBack?: StoredJob[]): CompiledQuery<unknown>[] {
  const statements: CompiledQuery<unknown>[] = [];
  for (const batch of chunks(jobs, INSERT_BATCH)) {
    const rows = batch.map(toJobRow);
    statements.push(insertJobs.compile(db, dialect, rows));
    const detailsOfJobs = batch.map((job) => job.executionDetails.map((detail) => toDetailRow(job, detail)));
    for (const detailBatch of chunks(detailsOfJobs.flat(), INSERT_BATCH)) statements.push(insertDetails.compile(db, dialect, detailBatch));
    if (!readBack) continue;
    rows.forEach((row, index) => {
      const details = [...detailsOfJobs[index]!].sort(detailOrder).map((detail) => toExecutionDetail(asReadBack(detail)));
      readBack.push(toStoredJob(asReadBack(row), details));
    });
  }
  return statements;
}

function detailOrder(a: DetailRow, b: DetailRow): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

// The statements of the delivery path, compiled once (see ReusableQuery).
const insertJobs = new ReusableInsert('jobs');
const insertDetails = new ReusableInsert('execution_details');
const jobById = new ReusableQuery((db, p: { environmentId: string; id: string }) =>
  db.selectFrom('jobs').selectAll().where('environment_id', '=', p.environmentId).where('id', '=', p.id),
);
/** By execution_details_notification (an event has a few details), the job checked on the rows (no index by job: 0032). */
const detailsOfJob = new ReusableQuery((db, p: { notificationId: string; jobId: string }) =>
  db.selectFrom('execution_details').selectAll().where('notification_id', '=', p.notificationId).where('job_id', '=', p.jobId).orderBy('created_at').orderBy('id'),
);
const updateJobFromOtherStatus = new ReusableQuery(
  (
    db,
    { whereEnvironmentId, whereId, whereStatusNot, ...changes }: Partial<Omit<JobRow, 'id' | 'environment_id' | 'notification_id' | 'created_at'>> & {
      whereEnvironmentId: string;
      whereId: string;
      whereStatusNot: string;
    },
  ) => db.updateTable('jobs').set(changes).where('environment_id', '=', whereEnvironmentId).where('id', '=', whereId).where('status', '<>', whereStatusNot),
);
const updateJobFromOtherStatusReturningId = new ReusableQuery(
  (
    db,
    { whereEnvironmentId, whereId, whereStatusNot, ...changes }: Partial<Omit<JobRow, 'id' | 'environment_id' | 'notification_id' | 'created_at'>> & {
      whereEnvironmentId: string;
      whereId: string;
      whereStatusNot: string;
    },
  ) => db.updateTable('jobs').set(changes).where('environment_id', '=', whereEnvironmentId).where('id', '=', whereId).where('status', '<>', whereStatusNot).returning('id'),
);
/** The last statement of `countedSaveStatement`: reads the CTE `moved` of the statement it ends. */
const updateJobUnlessMoved = new ReusableQuery(
  (db, { whereEnvironmentId, whereId, ...changes }: Partial<Omit<JobRow, 'id' | 'environment_id' | 'notification_id' | 'created_at'>> & { whereEnvironmentId: string; whereId: string }) =>
    db.updateTable('jobs').set(changes).where('environment_id', '=', whereEnvironmentId).where('id', '=', whereId).where(sql<boolean>`not exists (select 1 from moved)`),
);
const updateJob = new ReusableQuery(
  (db, { whereEnvironmentId, whereId, ...changes }: Partial<Omit<JobRow, 'id' | 'environment_id' | 'notification_id' | 'created_at'>> & { whereEnvironmentId: string; whereId: string }) =>
    db.updateTable('jobs').set(changes).where('environment_id', '=', whereEnvironmentId).where('id', '=', whereId),
);

/** Events per list page and more: up to this many, loadJobsWithDetails uses the statements below. */
const LIST_PAGE_MAX_EVENTS = 51;

/** The event ids of a page, given as n0, n1, ... (the shape is their number). */
const eventIdsOf = (p: Record<string, string>) => Object.keys(p).filter((name) => name !== 'environmentId').map((name) => p[name]!);
const jobsOfEvents = new ReusableQuery((db, p: Record<string, string>) =>
  db
    .selectFrom('jobs')
    .selectAll()
    // By jobs_notification_step; the environment is checked on the rows found (see environmentIs).
    .where(environmentIs(p.environmentId!))
    .where('notification_id', 'in', eventIdsOf(p))
    .orderBy('notification_id')
    .orderBy('step_index'),
);
const detailsOfEvents = new ReusableQuery((db, p: Record<string, string>) =>
  db
    .selectFrom('execution_details')
    .selectAll()
    .where('notification_id', 'in', eventIdsOf(p))
    .where('environment_id', '=', p.environmentId!)
    .orderBy('created_at')
    .orderBy('id'),
);

const jobsAndDetailsTexts = new Map<number, string>();

/**
 * PostgreSQL: the jobs of a page's events (kind 0, by event and step) and their execution details (kind 1, oldest
 * first) as one statement, one round trip instead of two. Each part keeps its own index (jobs_notification_step with
 * the environment checked on the rows, execution_details_notification); columns one part lacks are null.
 */
function jobsAndDetailsOfEvents(environmentId: string, ids: string[]): CompiledQuery<unknown> {
  let text = jobsAndDetailsTexts.get(ids.length);
  if (text === undefined) {
    // $1 the environment, $2... the ids, each used by both parts.
    const idList = ids.map((_, i) => `$${i + 2}`).join(', ');
    text = `select * from (
  select 0 as kind, id, notification_id, environment_id, organization_id, subscriber_id, transaction_id, template_id, step_index,
    type, status, provider_id, digest_group, document, created_at, updated_at,
    null as job_id, null as detail, null as is_retry, null as is_test, null as raw, null as source
  from jobs where environment_id || '' = $1 and notification_id in (${idList})
  union all
  select 1, id, notification_id, environment_id, null, null, null, null, null,
    null, status, provider_id, null, null, created_at, null,
    job_id, detail, is_retry, is_test, raw, source
  from execution_details where notification_id in (${idList}) and environment_id = $1
) page_rows
order by kind, case when kind = 0 then notification_id end, step_index, created_at, id`;
    jobsAndDetailsTexts.set(ids.length, text);
  }
  return CompiledQuery.raw(text, [environmentId, ...ids]);
}

/**
 * The jobs of several events with each job's execution details: for a list page one query on PostgreSQL and two on
 * SQLite, otherwise two per 500 events (a list page never costs one query per event). Jobs in step order, details oldest first.
 */
export async function loadJobsWithDetails(
  db: Kysely<Database>,
  environmentId: string,
  notificationIds: string[],
  /** Given by the list pages: their statements are then compiled once per page size. */
  dialect?: SqlStoreOptions['dialect'],
): Promise<Map<string, StoredJob[]>> {
  const byNotification = new Map<string, StoredJob[]>();
  if (notificationIds.length === 0) return byNotification;
  const jobRows: JobRow[] = [];
  const detailRows: DetailRow[] = [];
  const unique = [...new Set(notificationIds)];
  const reusable = dialect !== undefined && unique.length <= LIST_PAGE_MAX_EVENTS;
  if (reusable && dialect === 'postgres') {
    // A list page (at most 50 events, plus one): jobs and details in one round trip, its text built once per page size.
    const { rows } = await db.executeQuery(jobsAndDetailsOfEvents(environmentId, unique));
    for (const row of rows as Array<JobRow & DetailRow & { kind: number | string }>) {
      if (Number(row.kind) === 0) jobRows.push(row);
      else detailRows.push(row);
    }
  } else if (reusable) {
    // SQLite: two statements compiled once per page size. The union costs twice as much there (it sorts whole rows,
    // documents included, where the jobs come in index order): 418-542 µs against 194-249 µs for a page of 10.
    const params: Record<string, string> = { environmentId };
    unique.forEach((id, index) => (params[`n${index}`] = id));
    jobRows.push(...((await jobsOfEvents.execute(db, dialect, params)).rows as JobRow[]));
    detailRows.push(...((await detailsOfEvents.execute(db, dialect, params)).rows as DetailRow[]));
  }
  for (const chunk of reusable ? [] : chunks(unique, 500)) {
    jobRows.push(
      ...(await db
        .selectFrom('jobs')
        .selectAll()
        // By jobs_notification_step; the environment is checked on the rows found (see environmentIs).
        .where(environmentIs(environmentId))
        .where('notification_id', 'in', chunk)
        .orderBy('notification_id')
        .orderBy('step_index')
        .execute()),
    );
    detailRows.push(
      ...(await db
        .selectFrom('execution_details')
        .selectAll()
        .where('notification_id', 'in', chunk)
        .where('environment_id', '=', environmentId)
        .orderBy('created_at')
        .orderBy('id')
        .execute()),
    );
  }
  const detailsByJob = new Map<string, ExecutionDetail[]>();
  for (const row of detailRows) {
    const list = detailsByJob.get(row.job_id) ?? [];
    list.push(toExecutionDetail(row));
    detailsByJob.set(row.job_id, list);
  }
  for (const row of jobRows) {
    const list = byNotification.get(row.notification_id) ?? [];
    list.push(toStoredJob(row, detailsByJob.get(row.id) ?? []));
    byNotification.set(row.notification_id, list);
  }
  return byNotification;
}

/**
 * PostgreSQL, the kept event texts (notification-repository.ts, keepTexts): the jobs of these events with their
 * execution details, as loadJobsWithDetails gives them, and the `xmin` of every job and detail row read, by event.
 * One statement (one snapshot) for both kinds: the print of an event is made of exactly the rows its text is made of.
 */
export async function loadJobsWithDetailsAndXmins(
  db: Kysely<Database>,
  environmentId: string,
  notificationIds: string[],
): Promise<Map<string, { jobs: StoredJob[]; jobXmins: string[]; detailXmins: string[] }>> {
  const result = new Map<string, { jobs: StoredJob[]; jobXmins: string[]; detailXmins: string[] }>();
  if (notificationIds.length === 0) return result;
  const { rows } = await db.executeQuery(CompiledQuery.raw(JOBS_AND_DETAILS_WITH_XMINS, [environmentId, [...new Set(notificationIds)]]));
  const entry = (id: string) => {
    let found = result.get(id);
    if (!found) result.set(id, (found = { jobs: [], jobXmins: [], detailXmins: [] }));
    return found;
  };
  const detailsByJob = new Map<string, ExecutionDetail[]>();
  const jobRows: JobRow[] = [];
  for (const row of rows as Array<JobRow & DetailRow & { kind: number | string; row_xmin: string }>) {
    if (Number(row.kind) === 0) {
      jobRows.push(row);
      entry(row.notification_id).jobXmins.push(row.row_xmin);
    } else {
      const list = detailsByJob.get(row.job_id) ?? [];
      list.push(toExecutionDetail(row));
      detailsByJob.set(row.job_id, list);
      entry(row.notification_id).detailXmins.push(row.row_xmin);
    }
  }
  for (const row of jobRows) entry(row.notification_id).jobs.push(toStoredJob(row, detailsByJob.get(row.id) ?? []));
  return result;
}

/** jobsAndDetailsOfEvents with each row's xmin, the ids as one array ($2). */
const JOBS_AND_DETAILS_WITH_XMINS = `select * from (
  select 0 as kind, xmin::text as row_xmin, id, notification_id, environment_id, organization_id, subscriber_id, transaction_id, template_id, step_index,
    type, status, provider_id, digest_group, document, created_at, updated_at,
    null as job_id, null as detail, null as is_retry, null as is_test, null as raw, null as source
  from jobs where environment_id || '' = $1 and notification_id = any($2::text[])
  union all
  select 1, xmin::text, id, notification_id, environment_id, null, null, null, null, null,
    null, status, provider_id, null, null, created_at, null,
    job_id, detail, is_retry, is_test, raw, source
  from execution_details where notification_id = any($2::text[]) and environment_id = $1
) page_rows
order by kind, case when kind = 0 then notification_id end, step_index, created_at, id`;

/** A row as SQLite gives it back: a column left undefined (not inserted) reads as null. */
export function asReadBack<T extends object>(row: T): T {
  const copy = { ...row } as Record<string, unknown>;
  for (const key of Object.keys(copy)) if (copy[key] === undefined) copy[key] = null;
  return copy as T;
}

/** The parts of a job kept in its JSON document: everything the columns do not hold. */
type JobDocument = Pick<Job, 'digest' | 'step' | 'overrides' | 'payload' | 'scheduleExtensionsCount'>;

function toJobRow(job: StoredJob): JobRow {
  const document: JobDocument = {
    step: job.step,
    digest: job.digest,
    overrides: job.overrides,
    payload: job.payload,
    scheduleExtensionsCount: job.scheduleExtensionsCount,
  };
  return {
    id: job._id,
    environment_id: job._environmentId,
    organization_id: job._organizationId,
    notification_id: job._notificationId,
    subscriber_id: job._subscriberId,
    transaction_id: job.transactionId,
    template_id: job._templateId ?? null,
    step_index: job.stepIndex,
    type: job.type,
    status: job.status,
    provider_id: job.providerId,
    digest_group: job.digestGroup ?? null,
    document: toJson(document),
    created_at: job.createdAt,
    updated_at: job.updatedAt ?? job.createdAt,
  };
}

function toStoredJob(row: JobRow, executionDetails: ExecutionDetail[]): StoredJob {
  const document = fromJson<JobDocument>(row.document, { step: { _id: '', active: true, filters: [], _templateId: '' } });
  const job: StoredJob = {
    _id: row.id,
    _environmentId: row.environment_id,
    _organizationId: row.organization_id,
    _notificationId: row.notification_id,
    _subscriberId: row.subscriber_id,
    transactionId: row.transaction_id,
    stepIndex: Number(row.step_index),
    type: row.type as StoredJob['type'],
    status: row.status as StoredJob['status'],
    providerId: row.provider_id,
    step: document.step,
    executionDetails,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.template_id !== null) job._templateId = row.template_id;
  if (row.digest_group !== null) job.digestGroup = row.digest_group;
  if (document.digest !== undefined) job.digest = document.digest;
  if (document.overrides !== undefined) job.overrides = document.overrides;
  if (document.payload !== undefined) job.payload = document.payload;
  if (document.scheduleExtensionsCount !== undefined) job.scheduleExtensionsCount = document.scheduleExtensionsCount;
  return job;
}

function toDetailRow(job: Pick<StoredJob, '_id' | '_environmentId' | '_notificationId'>, detail: ExecutionDetail): DetailRow {
  return {
    id: detail._id,
    environment_id: job._environmentId,
    job_id: job._id,
    notification_id: job._notificationId,
    status: detail.status,
    detail: detail.detail,
    is_retry: toFlag(detail.isRetry),
    is_test: toFlag(detail.isTest),
    provider_id: detail.providerId ?? null,
    raw: detail.raw ?? null,
    source: detail.source,
    // created_at is NOT NULL and orders the details; a detail without one is stamped by its id's time.
    created_at: detail.createdAt ?? new Date(parseInt(detail._id.slice(0, 8), 16) * 1000).toISOString(),
  };
}

function toExecutionDetail(row: DetailRow): ExecutionDetail {
  const detail: ExecutionDetail = {
    _id: row.id,
    createdAt: row.created_at,
    status: row.status as ExecutionDetail['status'],
    detail: row.detail,
    isRetry: fromFlag(row.is_retry),
    isTest: fromFlag(row.is_test),
    raw: row.raw,
    source: row.source as ExecutionDetail['source'],
  };
  if (row.provider_id !== null) detail.providerId = row.provider_id;
  return detail;
}
