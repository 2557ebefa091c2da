import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { RateLimitStore } from '../ports.js';
import type { SqlDialectName } from './sql-store.js';
import { ReusableQuery } from './reusable-query.js';

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
    const [row] = (await countHit.execute(this.db, this.dialect, { environmentId, category, windowStart })).rows as Array<{ count: number | string }>;
    if (!row) throw new Error('rate limit counter: the upsert returned no row');
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

/** The hit's upsert, compiled once (it runs on every authenticated request; building it with Kysely each time showed). */
const countHit = new ReusableQuery((db, p: { environmentId: string; category: string; windowStart: string }) =>
  db
    .insertInto('rate_limit_counters')
    .values({ environment_id: p.environmentId, category: p.category, window_start: p.windowStart, count: 1 })
    .onConflict((oc) => oc.columns(['environment_id', 'category', 'window_start']).doUpdateSet({ count: sql<number>`rate_limit_counters.count + 1` }))
    .returning('count'),
);
