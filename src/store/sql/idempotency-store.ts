import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database, IdempotencyKeysTable } from './schema.js';
import type { IdempotencyRecord, IdempotencyStore } from '../ports.js';
import { fromJson, toJson } from './json.js';

/** Expired keys are deleted at most this often, by whichever claim comes along. */
const PURGE_INTERVAL_MS = 60_000;

type ClaimResult = { claimed: true; resumed?: IdempotencyRecord } | { claimed: false; existing: IdempotencyRecord };

/**
 * Idempotency keys in the `idempotency_keys` table. A claim is an insert on the primary key
 * (environment, key): the database decides which of two concurrent duplicates wins, on SQLite and
 * PostgreSQL alike, so exactly one of them runs. A takeover of a lapsed claim is a conditional update on the
 * lease the claimant saw, so of two concurrent takeovers one updates a row and the other none.
 */
export class SqlIdempotencyStore implements IdempotencyStore {
  private lastPurgeAt = 0;

  /** `owner`: this process instance; every store in a process shares one (the container makes it). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly owner: string = randomUUID(),
  ) {}

  async claim(record: IdempotencyRecord, now: string): Promise<ClaimResult> {
    await this.purgeExpired(now);
    // A few rounds: an expired or just-released holder is removed, or a takeover lost to another claimant.
    for (let round = 0; round < 3; round++) {
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
          owner: this.owner,
          lease_expires_at: record.leaseExpiresAt ?? null,
          seed: record.seed ?? null,
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
      if (!row) continue;
      if (row.expires_at <= now) {
        await this.db
          .deleteFrom('idempotency_keys')
          .where('environment_id', '=', record.environmentId)
          .where('key', '=', record.key)
          .where('expires_at', '<=', now)
          .execute();
        continue;
      }
      const existing = toRecord(row);
      if (!lapsedAndSame(existing, row.owner === null, record, now)) return { claimed: false, existing };
      // Take over only the claim as seen: same owner and lease (null-safe), still in progress.
      const updated = await this.db
        .updateTable('idempotency_keys')
        .set({ owner: this.owner, lease_expires_at: record.leaseExpiresAt ?? null })
        .where('environment_id', '=', record.environmentId)
        .where('key', '=', record.key)
        .where('state', '=', 'in_progress')
        .where((eb) => (row.owner === null ? eb('owner', 'is', null) : eb('owner', '=', row.owner)))
        .where((eb) => (row.lease_expires_at === null ? eb('lease_expires_at', 'is', null) : eb('lease_expires_at', '=', row.lease_expires_at)))
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 1) return { claimed: true, resumed: existing };
    }
    throw new Error('idempotency key could not be claimed');
  }

  async renew(claims: Array<{ environmentId: string; key: string }>, leaseExpiresAt: string): Promise<void> {
    if (claims.length === 0) return;
    // One statement per heartbeat whatever the number of claims: every live claim of this process is one it holds.
    await this.db
      .updateTable('idempotency_keys')
      .set({ lease_expires_at: leaseExpiresAt })
      .where('owner', '=', this.owner)
      // A literal, as in the partial index idempotency_keys_in_progress: a bound parameter would not match it.
      .where(sql.ref('state'), '=', sql.lit('in_progress'))
      .execute();
  }

  async complete(environmentId: string, key: string, response: { status: number; body: string; headers: Record<string, string> }): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', response_status: response.status, response_body: response.body, response_headers: toJson(response.headers), lease_expires_at: null })
      .where('environment_id', '=', environmentId)
      .where('key', '=', key)
      .where('owner', '=', this.owner)
      .where('state', '=', 'in_progress')
      .execute();
  }

  async release(environmentId: string, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('environment_id', '=', environmentId)
      .where('key', '=', key)
      .where('state', '=', 'in_progress')
      .where('owner', '=', this.owner)
      .execute();
  }

  private async purgeExpired(now: string): Promise<void> {
    const nowMs = Date.parse(now);
    if (nowMs - this.lastPurgeAt < PURGE_INTERVAL_MS) return;
    this.lastPurgeAt = nowMs;
    await this.db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
  }
}

/**
 * An in-progress claim whose holder stopped renewing it, for the very same request: the retry may take it over.
 * A claim made without a lease never lapses; one without an owner predates leases (migration 0018) and has.
 */
function lapsedAndSame(existing: IdempotencyRecord, ownerless: boolean, claim: IdempotencyRecord, now: string): boolean {
  return (
    existing.state === 'in_progress' &&
    (ownerless || (existing.leaseExpiresAt !== undefined && existing.leaseExpiresAt <= now)) &&
    existing.method === claim.method &&
    existing.path === claim.path &&
    existing.bodyHash === claim.bodyHash
  );
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
    leaseExpiresAt: row.lease_expires_at ?? undefined,
    seed: row.seed ?? undefined,
  };
}
