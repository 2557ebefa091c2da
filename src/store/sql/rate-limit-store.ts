import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { RateLimitStore } from '../ports.js';
import type { SqlDialectName } from './sql-store.js';

/** Finished windows are deleted at most this often. */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * Fixed-window counters in `rate_limit_counters`. A hit is one upsert that returns the new count
 * (SQLite ≥ 3.35 and PostgreSQL both support `on conflict ... returning`), because it runs on every
 * authenticated request, including the hot trigger path.
 */
export class SqlRateLimitStore implements RateLimitStore {
  private lastPruneAt = 0;

  constructor(
    private readonly db: Kysely<Database>,
    readonly dialect: SqlDialectName,
  ) {}

  async hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number> {
    const row = await this.db
      .insertInto('rate_limit_counters')
      .values({ environment_id: environmentId, category, window_start: windowStart, count: 1 })
      .onConflict((oc) =>
        oc.columns(['environment_id', 'category', 'window_start']).doUpdateSet({ count: sql<number>`rate_limit_counters.count + 1` }),
      )
      .returning('count')
      .executeTakeFirstOrThrow();
    await this.pruneOldWindows(windowStart, windowSeconds);
    return Number(row.count);
  }

  /** Keeps the current and the previous window; everything older can no longer be hit. */
  private async pruneOldWindows(windowStart: string, windowSeconds: number): Promise<void> {
    const windowStartMs = Date.parse(windowStart);
    if (windowStartMs - this.lastPruneAt < PRUNE_INTERVAL_MS) return;
    this.lastPruneAt = windowStartMs;
    const cutoff = new Date(windowStartMs - windowSeconds * 1000).toISOString();
    await this.db.deleteFrom('rate_limit_counters').where('window_start', '<', cutoff).execute();
  }
}
