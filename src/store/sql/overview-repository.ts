import { CompiledQuery, sql, type Kysely } from 'kysely';
import { hourOf, latencyBucket, OVERVIEW_CHANNELS, type OverviewEngagement, type OverviewOutcome } from '../../domain/overview.js';
import type { OverviewRepository, OverviewRows } from '../ports.js';
import type { Database } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { ReusableInsert } from './reusable-query.js';
import { BACKEND_SHARD_SQL } from './backend-shard.js';
import type { CommitSums } from './snapshot-reads.js';

/**
 * PostgreSQL: concurrent workers add to the same hour's row; spread over this many rows, summed when read (the rows a
 * step's end adds to use the connection's shard instead, see stepOutcomeStatementsFromMoved; readers sum any shard).
 */
const POSTGRES_OVERVIEW_SHARDS = 8;

function shardOf(dialect: SqlStoreOptions['dialect'], id: string): number {
  if (dialect !== 'postgres') return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % POSTGRES_OVERVIEW_SHARDS;
}

export function isOverviewChannel(type: string): boolean {
  return (OVERVIEW_CHANNELS as readonly string[]).includes(type);
}

/** One channel step that reached its final status, as the overview counts it (job-repository.ts, endedStepOf). */
export interface EndedStep {
  jobId: string;
  environmentId: string;
  channel: string;
  providerId: string;
  workflowId: string;
  outcome: OverviewOutcome;
  createdAt: string;
  endedAt: string;
}

/**
 * Adds one ended channel step to the overview: its outcome in the hour it ended, and for a sent step its
 * trigger-to-delivery latency. Called by the job repository in the transaction that moved the job to its final status,
 * once per transition.
 */
export async function recordStepOutcome(
  db: Kysely<Database>,
  dialect: SqlStoreOptions['dialect'],
  step: EndedStep,
): Promise<void> {
  for (const statement of stepOutcomeStatements(db, dialect, step)) await db.executeQuery(statement);
}

/** The upserts of `recordStepOutcome`, not executed. */
function stepOutcomeStatements(db: Kysely<Database>, dialect: SqlStoreOptions['dialect'], step: EndedStep): CompiledQuery<unknown>[] {
  const hour = hourOf(step.endedAt);
  const shard = shardOf(dialect, step.jobId);
  const statements = [addOutcomeCount.compile(db, dialect, [{ environment_id: step.environmentId, hour, channel: step.channel, provider_id: step.providerId, workflow_id: step.workflowId, outcome: step.outcome, shard, count: 1 }])];
  if (step.outcome !== 'sent') return statements;
  const latencyMs = Math.max(0, Date.parse(step.endedAt) - Date.parse(step.createdAt));
  statements.push(addLatencyCount.compile(db, dialect, [{ environment_id: step.environmentId, hour, channel: step.channel, bucket: latencyBucket(latencyMs), shard, count: 1 }]));
  return statements;
}

// Once per delivery, compiled once (see ReusableInsert).
const addOutcomeCount = new ReusableInsert('overview_counts', (query) =>
  query.onConflict((oc) => oc.columns(['environment_id', 'hour', 'channel', 'provider_id', 'workflow_id', 'outcome', 'shard']).doUpdateSet({ count: sql<number>`overview_counts.count + 1` })),
);
const addLatencyCount = new ReusableInsert('overview_latency', (query) =>
  query.onConflict((oc) => oc.columns(['environment_id', 'hour', 'channel', 'bucket', 'shard']).doUpdateSet({ count: sql<number>`overview_latency.count + 1` })),
);

/**
 * PostgreSQL: the same counts as `recordStepOutcome`, as statements to combine into the job's final save (see
 * `oneStatement`): each adds its row once per row of the CTE `moved` (the guarded status update's RETURNING), so
 * nothing is counted when the status did not move. The shard is the writing connection's (BACKEND_SHARD_SQL), not the
 * job's hash: every delivery ends a step here, and concurrent deliveries then rarely add to the same row.
 */
export function stepOutcomeStatementsFromMoved(
  step: EndedStep,
  from = ' from moved',
): CompiledQuery<unknown>[] {
  const hour = hourOf(step.endedAt);
  const statements = [
    CompiledQuery.raw(
      'insert into "overview_counts" ("environment_id", "hour", "channel", "provider_id", "workflow_id", "outcome", "shard", "count") ' +
        `select $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, ${BACKEND_SHARD_SQL}, 1${from} ` +
        'on conflict ("environment_id", "hour", "channel", "provider_id", "workflow_id", "outcome", "shard") do update set "count" = "overview_counts"."count" + 1',
      [step.environmentId, hour, step.channel, step.providerId, step.workflowId, step.outcome],
    ),
  ];
  if (step.outcome !== 'sent') return statements;
  const latencyMs = Math.max(0, Date.parse(step.endedAt) - Date.parse(step.createdAt));
  statements.push(
    CompiledQuery.raw(
      'insert into "overview_latency" ("environment_id", "hour", "channel", "bucket", "shard", "count") ' +
        `select $1::text, $2::text, $3::text, $4::integer, ${BACKEND_SHARD_SQL}, 1${from} ` +
        'on conflict ("environment_id", "hour", "channel", "bucket", "shard") do update set "count" = "overview_latency"."count" + 1',
      [step.environmentId, hour, step.channel, latencyBucket(latencyMs)],
    ),
  );
  return statements;
}

/**
 * The counts of a step that reaches its final status in the write that inserts its job (held writes,
 * `SqlStore.batch`): added unconditionally, since a new job's row cannot have been counted before (were the job's id
 * taken, the insert would fail and the write with it). PostgreSQL: statements to combine into one (`oneStatement`).
 */
export function stepOutcomeStatementsForNewJob(db: Kysely<Database>, dialect: SqlStoreOptions['dialect'], step: EndedStep): CompiledQuery<unknown>[] {
  return dialect === 'postgres' ? stepOutcomeStatementsFromMoved(step, '') : stepOutcomeStatements(db, dialect, step);
}

/**
 * SQLite, the held writes' synchronous block: the counts of `stepOutcomeStatementsForNewJob` as rows to add at the
 * commit (see CommitSums): the deliveries of one commit mostly add to the same hour's rows, written once per commit.
 */
export function stepOutcomeSumsForNewJob(db: Kysely<Database>, step: EndedStep): Array<{ sums: CommitSums<Record<string, unknown>>; key: string; row: Record<string, unknown> }> {
  const hour = hourOf(step.endedAt);
  const shard = shardOf('sqlite', step.jobId);
  const counts = { environment_id: step.environmentId, hour, channel: step.channel, provider_id: step.providerId, workflow_id: step.workflowId, outcome: step.outcome, shard };
  const added: Array<{ sums: CommitSums<Record<string, unknown>>; key: string; row: Record<string, unknown> }> = [{ sums: outcomeSumsOf(db), key: JSON.stringify(Object.values(counts)), row: counts }];
  if (step.outcome !== 'sent') return added;
  const latencyMs = Math.max(0, Date.parse(step.endedAt) - Date.parse(step.createdAt));
  const latency = { environment_id: step.environmentId, hour, channel: step.channel, bucket: latencyBucket(latencyMs), shard };
  added.push({ sums: latencySumsOf(db), key: JSON.stringify(Object.values(latency)), row: latency });
  return added;
}

const sumOutcomeCounts = new ReusableInsert('overview_counts', (query) =>
  query.onConflict((oc) => oc.columns(['environment_id', 'hour', 'channel', 'provider_id', 'workflow_id', 'outcome', 'shard']).doUpdateSet({ count: sql<number>`overview_counts.count + excluded.count` })),
);
const sumLatencyCounts = new ReusableInsert('overview_latency', (query) =>
  query.onConflict((oc) => oc.columns(['environment_id', 'hour', 'channel', 'bucket', 'shard']).doUpdateSet({ count: sql<number>`overview_latency.count + excluded.count` })),
);
/** One CommitSums per database and table: a commit sums the rows of one CommitSums object. */
const outcomeSums = new WeakMap<Kysely<Database>, CommitSums<Record<string, unknown>>>();
const latencySums = new WeakMap<Kysely<Database>, CommitSums<Record<string, unknown>>>();
function outcomeSumsOf(db: Kysely<Database>): CommitSums<Record<string, unknown>> {
  let sums = outcomeSums.get(db);
  if (!sums) outcomeSums.set(db, (sums = { write: (rows) => chunkedUpserts(db, sumOutcomeCounts, rows) }));
  return sums;
}
function latencySumsOf(db: Kysely<Database>): CommitSums<Record<string, unknown>> {
  let sums = latencySums.get(db);
  if (!sums) latencySums.set(db, (sums = { write: (rows) => chunkedUpserts(db, sumLatencyCounts, rows) }));
  return sums;
}
function chunkedUpserts(db: Kysely<Database>, insert: ReusableInsert<'overview_counts'> | ReusableInsert<'overview_latency'>, rows: Array<{ row: Record<string, unknown>; count: number }>): CompiledQuery[] {
  const statements: CompiledQuery[] = [];
  for (let i = 0; i < rows.length; i += 100) {
    statements.push(insert.compile(db, 'sqlite', rows.slice(i, i + 100).map(({ row, count }) => ({ ...row, count }))));
  }
  return statements;
}

/** An in-app message became read/seen (+1) or not (−1): counted in the hour the message was created. */
export async function recordEngagement(
  db: Kysely<Database>,
  dialect: SqlStoreOptions['dialect'],
  change: { messageId: string; environmentId: string; workflowId: string; createdAt: string; what: OverviewEngagement; delta: 1 | -1 },
): Promise<void> {
  await db
    .insertInto('overview_counts')
    .values({
      environment_id: change.environmentId,
      hour: hourOf(change.createdAt),
      channel: 'in_app',
      provider_id: '',
      workflow_id: change.workflowId,
      outcome: change.what,
      shard: shardOf(dialect, change.messageId),
      count: change.delta,
    })
    .onConflict((oc) => oc.columns(['environment_id', 'hour', 'channel', 'provider_id', 'workflow_id', 'outcome', 'shard']).doUpdateSet({ count: sql<number>`overview_counts.count + excluded.count` }))
    .execute();
}

/** Reads the kept counts: a few grouped sums over the range's rows of two small tables (no event or message is read). */
export class SqlOverviewRepository implements OverviewRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlStoreOptions['dialect'],
  ) {}

  async recordReportedOutcome(
    environmentId: string,
    report: { messageId: string; channel: string; providerId: string; workflowId: string; outcome: 'delivered' | 'bounced'; at: string },
  ): Promise<void> {
    await this.db
      .insertInto('overview_counts')
      .values({
        environment_id: environmentId,
        hour: hourOf(report.at),
        channel: report.channel,
        provider_id: report.providerId,
        workflow_id: report.workflowId,
        outcome: report.outcome,
        shard: shardOf(this.dialect, report.messageId),
        count: 1,
      })
      .onConflict((oc) => oc.columns(['environment_id', 'hour', 'channel', 'provider_id', 'workflow_id', 'outcome', 'shard']).doUpdateSet({ count: sql<number>`overview_counts.count + 1` }))
      .execute();
  }

  async read(environmentId: string, range: { fromHour: string; toHour: string; bucket: 'hour' | 'day' }): Promise<OverviewRows> {
    const counts = () =>
      this.db.selectFrom('overview_counts').where('environment_id', '=', environmentId).where('hour', '>=', range.fromHour).where('hour', '<', range.toHour);
    const bucketLength = range.bucket === 'hour' ? 13 : 10;
    const bucketExpression = sql<string>`substr(hour, 1, ${sql.lit(bucketLength)})`;
    const [series, byProviderWorkflow, latency] = await Promise.all([
      counts()
        .select([bucketExpression.as('bucket'), 'channel', 'outcome', (eb) => eb.fn.sum<number | string>('count').as('count')])
        .groupBy([bucketExpression, 'channel', 'outcome'])
        .execute(),
      counts()
        .select(['channel', 'provider_id', 'workflow_id', 'outcome', (eb) => eb.fn.sum<number | string>('count').as('count')])
        .groupBy(['channel', 'provider_id', 'workflow_id', 'outcome'])
        .execute(),
      this.db
        .selectFrom('overview_latency')
        .where('environment_id', '=', environmentId)
        .where('hour', '>=', range.fromHour)
        .where('hour', '<', range.toHour)
        .select(['channel', 'bucket', (eb) => eb.fn.sum<number | string>('count').as('count')])
        .groupBy(['channel', 'bucket'])
        .execute(),
    ]);
    return {
      series: series.map((row) => ({ bucket: row.bucket, channel: row.channel, outcome: row.outcome, count: Number(row.count) })),
      totals: byProviderWorkflow.map((row) => ({ channel: row.channel, providerId: row.provider_id, workflowId: row.workflow_id, outcome: row.outcome, count: Number(row.count) })),
      latency: latency.map((row) => ({ channel: row.channel, bucket: Number(row.bucket), count: Number(row.count) })),
    };
  }
}
