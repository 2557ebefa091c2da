import type { Kysely } from 'kysely';
import type { Database, IdempotencyKeysTable } from './schema.js';
import type { IdempotencyRecord, IdempotencyStore } from '../ports.js';
import { fromJson, toJson } from './json.js';

/** Expired keys are deleted at most this often, by whichever claim comes along. */
const PURGE_INTERVAL_MS = 60_000;

/**
 * Idempotency keys in the `idempotency_keys` table. A claim is an insert on the primary key
 * (environment, key): the database decides which of two concurrent duplicates wins, on SQLite and
 * PostgreSQL alike, so exactly one of them runs.
 */
export class SqlIdempotencyStore implements IdempotencyStore {
  private lastPurgeAt = 0;

  constructor(private readonly db: Kysely<Database>) {}

  async claim(record: IdempotencyRecord, now: string): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRecord }> {
    await this.purgeExpired(now);
    // Two rounds: an expired or just-released holder is removed and the insert tried once more.
    for (let round = 0; round < 2; round++) {
      const inserted = await this.db
        .insertInto('idempotency_keys')
        .values({
          environment_id: record.environmentId,
          key: record.key,
          method: record.method,
          path: record.path,
          body_hash: record.bodyHash,
          state: 'in_progress',
          response_status: null,
          response_body: null,
          response_headers: null,
          expires_at: record.expiresAt,
          created_at: now,
        })
        .onConflict((oc) => oc.columns(['environment_id', 'key']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { claimed: true };

      const row = await this.db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('environment_id', '=', record.environmentId)
        .where('key', '=', record.key)
        .executeTakeFirst();
      if (row && row.expires_at > now) return { claimed: false, existing: toRecord(row) };
      if (row) {
        await this.db
          .deleteFrom('idempotency_keys')
          .where('environment_id', '=', record.environmentId)
          .where('key', '=', record.key)
          .where('expires_at', '<=', now)
          .execute();
      }
    }
    throw new Error('idempotency key could not be claimed');
  }

  async complete(environmentId: string, key: string, response: { status: number; body: string; headers: Record<string, string> }): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', response_status: response.status, response_body: response.body, response_headers: toJson(response.headers) })
      .where('environment_id', '=', environmentId)
      .where('key', '=', key)
      .execute();
  }

  async release(environmentId: string, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('environment_id', '=', environmentId)
      .where('key', '=', key)
      .where('state', '=', 'in_progress')
      .execute();
  }

  private async purgeExpired(now: string): Promise<void> {
    const nowMs = Date.parse(now);
    if (nowMs - this.lastPurgeAt < PURGE_INTERVAL_MS) return;
    this.lastPurgeAt = nowMs;
    await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
  }
}

function toRecord(row: IdempotencyKeysTable): IdempotencyRecord {
  return {
    environmentId: row.environment_id,
    key: row.key,
    method: row.method,
    path: row.path,
    bodyHash: row.body_hash,
    state: row.state === 'done' ? 'done' : 'in_progress',
    responseStatus: row.response_status ?? undefined,
    responseBody: row.response_body ?? undefined,
    responseHeaders: fromJson<Record<string, string>>(row.response_headers, {}),
    expiresAt: row.expires_at,
  };
}
