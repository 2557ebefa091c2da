import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.js';
import { oneStatement, oneStatementOfMany, type StatementGroup } from './one-statement.js';

/**
 * Held writes in flight at once per process; more wait and go together. One: the worker's deliveries then keep at most
 * one PostgreSQL backend busy, and their statements are the largest (2 lanes of 8 measured worse, session 29).
 */
export const HELD_WRITE_LANES = 1;
/** Held writes in one statement, at most (also the shard stride of oneStatementOfMany). */
export const MAX_HELD_WRITES_PER_STATEMENT = 16;

/**
 * PostgreSQL: the held writes (`SqlStore.batch`, one statement each, see held-store.ts) of one process share their
 * statements under load. A write goes out at once, alone and as before, while fewer than `lanes` are in flight; one made
 * while all lanes are busy waits, and those waiting go out together in one statement (`oneStatementOfMany`) when a lane
 * frees: one round trip, one parse/bind and one commit for several deliveries instead of one each (BENCHMARKS.md,
 * session 29). All or nothing as before, per group: a combined statement that fails (one group's row taken, two groups
 * adding to one subscriber's counter row) wrote nothing, and then each group is sent alone, so each caller gets its own
 * write's outcome. Each caller's promise settles when its own write is committed (or failed).
 */
export class HeldStatementBatches {
  private readonly waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxParameters: number,
    private readonly lanes = HELD_WRITE_LANES,
    private readonly maxBatch = MAX_HELD_WRITES_PER_STATEMENT,
  ) {}

  /**
   * @param keys Writes with a key in common never share a statement: they may add to the same rows named by value (one
   *   subscriber's counter rows), which one statement cannot do twice. The held writes pass their events' subscribers.
   */
  run(group: StatementGroup, keys: readonly string[] = []): Promise<void> {
    const parameters = group.before.reduce((sum, statement) => sum + ('name' in statement ? statement.query : statement).parameters.length, group.last.parameters.length);
    const done = new Promise<void>((resolve, reject) => this.waiting.push({ group, keys, parameters, resolve, reject }));
    this.pump();
    return done;
  }

  private pump(): void {
    while (this.inFlight < this.lanes && this.waiting.length > 0) {
      // In call order, writes of the first one's shape only (so a process prepares one text per shape and count, not one
      // per mix of shapes), skipping one with a key taken by one already in the batch (it stays first for the next).
      const batch: Waiting[] = [];
      const keys = new Set<string>();
      let parameters = 0;
      for (let i = 0; i < this.waiting.length && batch.length < this.maxBatch; i++) {
        const waiting = this.waiting[i]!;
        if (batch.length > 0 && (parameters + waiting.parameters > this.maxParameters || !sameShape(batch[0]!.group, waiting.group) || waiting.keys.some((key) => keys.has(key)))) continue;
        batch.push(waiting);
        parameters += waiting.parameters;
        for (const key of waiting.keys) keys.add(key);
        this.waiting.splice(i--, 1);
      }
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async send(batch: Waiting[]): Promise<void> {
    if (batch.length > 1) {
      try {
        await this.db.executeQuery(oneStatementOfMany(batch.map(({ group }) => group), this.maxBatch));
        for (const { resolve } of batch) resolve();
        return;
      } catch {
        // Nothing of it was written: each alone below, for its own outcome.
      }
    }
    await Promise.all(
      batch.map(async ({ group, resolve, reject }) => {
        try {
          await this.db.executeQuery(single(group));
          resolve();
        } catch (error) {
          reject(error);
        }
      }),
    );
  }
}

interface Waiting {
  group: StatementGroup;
  keys: readonly string[];
  parameters: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The same statements in the same order under the same names: the combined text differs only by the count. */
export function sameShape(a: StatementGroup, b: StatementGroup): boolean {
  if (a.before.length !== b.before.length || a.last.sql !== b.last.sql) return false;
  for (let i = 0; i < a.before.length; i++) {
    const x = a.before[i]!;
    const y = b.before[i]!;
    if ('name' in x ? !('name' in y) || x.name !== y.name || x.query.sql !== y.query.sql : 'name' in y || x.sql !== y.sql) return false;
  }
  return true;
}

function single({ before, last }: StatementGroup): CompiledQuery<unknown> {
  return oneStatement(before, last);
}
