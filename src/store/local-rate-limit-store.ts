import type { RateLimitStore } from './ports.js';

/**
 * Fixed-window counters in this process's memory, for embedded Herald (SQLite, no Redis): one server process answers
 * every request (`herald api` needs Redis; an embedded data directory is served by one `herald start`), so its own counts are the
 * environment's counts, exact per key. It replaces an upsert and its share of a commit on every authenticated request.
 * A restart starts the current window from zero, as a Redis flush would; limits guard against floods, not a quota to bill.
 * A hit answers at once; read requests are gathered per event-loop turn by `http/read-gathering.ts` instead (the SQL
 * store's commit used to do that as a side effect).
 */
export class LocalRateLimitStore implements RateLimitStore {
  /**
   * Counts by window start, then environment, then category: the keys are strings a request already holds (the
   * window's kept text, the cached key's environment id, a category literal), whose hashes V8 keeps, so a hit builds
   * and hashes no new string.
   */
  private readonly windows = new Map<string, Map<string, Map<string, number>>>();

  async hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number> {
    return this.hitNow(environmentId, category, windowStart, windowSeconds);
  }

  hitNow(environmentId: string, category: string, windowStart: string, windowSeconds: number): number {
    let counts = this.windows.get(windowStart);
    if (!counts) {
      this.pruneBefore(Date.parse(windowStart) - windowSeconds * 1000);
      counts = new Map();
      this.windows.set(windowStart, counts);
    }
    let byCategory = counts.get(environmentId);
    if (!byCategory) counts.set(environmentId, (byCategory = new Map()));
    const count = (byCategory.get(category) ?? 0) + 1;
    byCategory.set(category, count);
    return count;
  }

  /** Keeps the previous window and later ones (as SqlRateLimitStore does); older ones can no longer be hit. */
  private pruneBefore(cutoffMs: number): void {
    for (const start of this.windows.keys()) if (Date.parse(start) < cutoffMs) this.windows.delete(start);
  }
}
