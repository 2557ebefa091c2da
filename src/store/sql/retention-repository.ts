import { sql, type Kysely } from 'kysely';
import type { ExpiredEventsDeleted, RetentionBatch, RetentionCursor, RetentionRepository, RetentionSweepSummary } from '../ports.js';
import { MessageCounterDeltas } from './message-repository.js';
import { environmentIs } from './plan-hints.js';
import type { Database } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { chunks } from './subscriber-repository.js';

/** Ids per IN list: far under both databases' bound-parameter limits. */
const IN_CHUNK = 500;

/**
 * The job statuses of an event still in progress, written as literals: the partial index jobs_unfinished (migration
 * 0016) has exactly this predicate, and SQLite uses a partial index only when the query repeats it literally.
 */
const UNFINISHED = sql<boolean>`status in ('pending', 'queued', 'running', 'delayed')`;

const LAST_SWEEP_KEY = 'retention:last-sweep';
const leaseKey = (name: string) => `lease:${name}`;

/**
 * Deletes expired history in batches, each batch one short transaction (on SQLite, a savepoint inside the shared
 * group commit: the writer is held for the batch only, so a trigger waits at most one batch). Rows are found through
 * the indexes the lists already use (environment + created_at), or, for trigger records, which have no time index,
 * through their primary key: record ids start with their creation second (domain/ids.ts).
 */
export class SqlRetentionRepository implements RetentionRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: Pick<SqlStoreOptions, 'dialect'>,
  ) {}

  async deleteExpiredEvents(environmentId: string, before: string, limit: number, after?: RetentionCursor): Promise<ExpiredEventsDeleted> {
    return this.db.transaction().execute(async (trx) => {
      const started = performance.now();
      let query = trx
        .selectFrom('notifications')
        .select(['id', 'created_at'])
        .where('environment_id', '=', environmentId)
        .where('created_at', '<', before);
      if (after) {
        query = query.where((eb) =>
          eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]),
        );
      }
      const rows = await query.orderBy('created_at').orderBy('id').limit(limit).execute();
      const result: ExpiredEventsDeleted = { scanned: rows.length, events: 0, jobs: 0, executionDetails: 0, heldMs: 0 };
      if (rows.length === 0) return { ...result, heldMs: performance.now() - started };
      const last = rows[rows.length - 1];
      if (rows.length === limit) result.next = { createdAt: last.created_at, id: last.id };

      for (const ids of chunks(rows.map((row) => row.id), IN_CHUNK)) {
        const busy = await trx
          .selectFrom('jobs')
          .select('notification_id')
          .where('environment_id', '=', environmentId)
          .where('notification_id', 'in', ids)
          .where(UNFINISHED)
          .execute();
        const kept = new Set(busy.map((row) => row.notification_id));
        const expired = ids.filter((id) => !kept.has(id));
        if (expired.length === 0) continue;
        // A failed job retried from the dashboard between the check and here (PostgreSQL) keeps its job and its event.
        const jobs = await trx
          .deleteFrom('jobs')
          .where('notification_id', 'in', expired)
          .where((eb) => eb.not(UNFINISHED))
          .executeTakeFirst();
        result.jobs += Number(jobs.numDeletedRows);
        // The environment checked on the rows (environmentIs): as `environment_id = ?` SQLite without statistics
        // searched an index by the environment and read every event of it for each batch, not the batch's ids.
        const events = await trx
          .deleteFrom('notifications')
          .where('id', 'in', expired)
          .where(environmentIs(environmentId))
          .where((eb) => eb.not(eb.exists(eb.selectFrom('jobs').select(sql.lit(1).as('one')).whereRef('jobs.notification_id', '=', 'notifications.id'))))
          .returning('id')
          .execute();
        if (events.length === 0) continue;
        const gone = events.map((row) => row.id);
        result.events += gone.length;
        const details = await trx.deleteFrom('execution_details').where('notification_id', 'in', gone).executeTakeFirst();
        result.executionDetails += Number(details.numDeletedRows);
        await trx.deleteFrom('notification_topics').where('notification_id', 'in', gone).execute();
        // PostgreSQL's kept texts are not dropped by triggers (SQLite's are, with the event).
        if (this.options.dialect === 'postgres') await trx.deleteFrom('notification_texts').where('notification_id', 'in', gone).execute();
      }
      result.heldMs = performance.now() - started;
      return result;
    });
  }

  async deleteExpiredTriggers(before: string, limit: number): Promise<RetentionBatch & { deleted: number }> {
    const boundary = idBoundary(before);
    return this.db.transaction().execute(async (trx) => {
      const started = performance.now();
      const triggers = await trx
        .deleteFrom('triggers')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('triggers')
            .select('id')
            .where('id', '<', boundary)
            .where('created_at', '<', before)
            .where('state', '<>', 'accepted')
            .orderBy('id')
            .limit(limit),
        )
        .executeTakeFirst();
      // The SQL queue keeps a job that failed for good as its failure record; it goes with the trigger records.
      const failedJobs = await trx
        .deleteFrom('queue_jobs')
        .where('id', 'in', (eb) =>
          eb.selectFrom('queue_jobs').select('id').where('state', '=', 'failed').where('run_at', '<', before).where('updated_at', '<', before).limit(limit),
        )
        .executeTakeFirst();
      return { deleted: Number(triggers.numDeletedRows) + Number(failedJobs.numDeletedRows), heldMs: performance.now() - started };
    });
  }

  async deleteExpiredMessages(environmentId: string, before: string, limit: number): Promise<RetentionBatch & { deleted: number; inboxes: string[] }> {
    let total = 0;
    let heldMs = 0;
    const inboxes = new Set<string>();
    // One index range per deleted flag (messages_env_created is environment, deleted, created_at, id).
    for (const deleted of [0, 1]) {
      if (total >= limit) break;
      total += await this.db.transaction().execute(async (trx) => {
        const started = performance.now();
        const rows = await trx
          .deleteFrom('messages')
          .where('id', 'in', (eb) =>
            eb
              .selectFrom('messages')
              .select('id')
              .where('environment_id', '=', environmentId)
              .where('deleted', '=', deleted)
              .where('created_at', '<', before)
              .orderBy('created_at')
              .limit(limit - total),
          )
          .returning(['id', 'environment_id', 'channel', 'external_subscriber_id', 'context_keys_norm', 'deleted', 'subscriber_id'])
          .execute();
        // RETURNING names the rows this statement removed, as they were: a message soft-deleted meanwhile (deleted = 1)
        // was already uncounted, and a row another sweeper removed first is not returned here.
        const deltas = new MessageCounterDeltas(this.options.dialect);
        for (const row of rows) {
          if (row.deleted === 0) deltas.add(row, -1);
          if (row.deleted === 0 && row.channel === 'in_app') inboxes.add(row.subscriber_id);
        }
        await deltas.apply(trx);
        heldMs += performance.now() - started;
        return rows.length;
      });
    }
    return { deleted: total, heldMs, inboxes: [...inboxes] };
  }

  async reclaimSpace(maxPages: number): Promise<RetentionBatch & { pages: number }> {
    if (this.options.dialect !== 'sqlite') return { pages: 0, heldMs: 0 };
    const pages = Math.max(0, Math.floor(maxPages));
    const before = await this.freePages();
    if (before === 0 || pages === 0) return { pages: 0, heldMs: 0 };
    // Frees nothing unless the file is in auto_vacuum = INCREMENTAL (store/sqlite/storage.ts switches it). Each run of
    // the pragma statement is one step, which gives back one page (a driver runs a non-reading statement one step), so
    // it runs once per page, all in one short transaction that truncates the file when it commits.
    const steps = Math.min(pages, before);
    const vacuumStep = sql.raw('pragma incremental_vacuum(1)');
    const heldMs = await this.db.transaction().execute(async (trx) => {
      const started = performance.now();
      for (let step = 0; step < steps; step++) await vacuumStep.execute(trx);
      return performance.now() - started;
    });
    return { pages: before - (await this.freePages()), heldMs };
  }

  async tryLease(name: string, owner: string, until: string, now: string): Promise<boolean> {
    const result = await this.db
      .insertInto('settings')
      .values({ key: leaseKey(name), value: `${until}|${owner}` })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({ value: (eb) => eb.ref('excluded.value') })
          // The value starts with the expiry (ISO 8601 sorts as text): expired, or held by the same owner.
          .where((eb) => eb.or([eb('settings.value', '<', now), eb('settings.value', 'like', `%|${owner}`)])),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.db.deleteFrom('settings').where('key', '=', leaseKey(name)).where('value', 'like', `%|${owner}`).execute();
  }

  async saveLastSweep(summary: RetentionSweepSummary): Promise<void> {
    const value = JSON.stringify(summary);
    await this.db
      .insertInto('settings')
      .values({ key: LAST_SWEEP_KEY, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }

  async lastSweep(): Promise<RetentionSweepSummary | undefined> {
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', LAST_SWEEP_KEY).executeTakeFirst();
    return row ? (JSON.parse(row.value) as RetentionSweepSummary) : undefined;
  }

  private async freePages(): Promise<number> {
    const { rows } = await sql<{ freelist_count: number }>`pragma freelist_count`.execute(this.db);
    return Number(rows[0]?.freelist_count ?? 0);
  }
}

/** The smallest record id made at `iso` or later: ids made before it sort below (domain/ids.ts). */
export function idBoundary(iso: string): string {
  const seconds = Math.floor(Date.parse(iso) / 1000);
  return Math.max(0, seconds).toString(16).padStart(8, '0') + '0'.repeat(16);
}
