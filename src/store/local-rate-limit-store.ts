import type { RateLimitStore } from './ports.js';

/**
 * Fixed-window counters in this process's memory, for embedded Herald (SQLite, no Redis): one server process answers
 * every request (`herald api` needs Redis; an embedded data directory is served by one `herald start`), so its own counts are the
 * environment's counts, exact per key. It replaces an upsert and its share of a commit on every authenticated request.
 * A restart starts the current window from zero, as a Redis flush would; limits guard against floods, not a quota to bill.
 *
 * A hit is counted at once but answered after the current event-loop turn, together with every other hit of that turn.
 * The SQL store did this as a side effect (its upsert waited for the group commit), and answering at once undid it:
 * each request then ran from its socket's data callback to its response before the next one was parsed, and a list
 * request cost ~1.6× the CPU (530 against 330 µs of user time, `bench/profile-lists.ts`, 2026-11-26), halving the list
 * rates of `npm run bench:http`. Resolving each hit in its own `setImmediate` did not help: the requests of a turn
 * must continue together.
 */
export class LocalRateLimitStore implements RateLimitStore {
  /** Counts by window start, then by `environmentId category`. */
  private readonly windows = new Map<string, Map<string, number>>();
  /** Resolves after the current turn; shared by its hits. */
  private turnEnd?: Promise<void>;

  async hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number> {
    let counts = this.windows.get(windowStart);
    if (!counts) {
      this.pruneBefore(Date.parse(windowStart) - windowSeconds * 1000);
      counts = new Map();
      this.windows.set(windowStart, counts);
    }
    const key = `${environmentId} ${category}`;
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    await (this.turnEnd ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.turnEnd = undefined;
        resolve();
      }),
    ));
    return count;
  }

  /** Keeps the previous window and later ones (as SqlRateLimitStore does); older ones can no longer be hit. */
  private pruneBefore(cutoffMs: number): void {
    for (const start of this.windows.keys()) if (Date.parse(start) < cutoffMs) this.windows.delete(start);
  }
}
