/**
 * PostgreSQL named (prepared) statements for the statements the hot paths repeat (issue 24): the server parses and
 * plans a named statement once per connection instead of on every execution (measured 45-55 µs of backend CPU per
 * by-key SELECT unnamed, 15-18 µs named), and the client sends no Parse message after the first run.
 *
 * Statements are marked by the code that builds them once per shape (`ReusableQuery`, `ReusableInsert`,
 * `oneStatement`); the pool's clients run a marked text under its name (store/postgres/connection.ts). Only by-key
 * lookups and writes are marked: a statement with ORDER BY or LIMIT (a list page) stays unnamed, so PostgreSQL never
 * swaps its plan for a generic one, unless its builder marks it as a list (`{ list: true }`) because a test holds its
 * generic plan on tables grown after it was made (the events page's seek, test/store/postgres/event-page-prepared.test.ts;
 * one subscriber's messages page, test/store/postgres/message-page-plans.test.ts).
 * The set is bounded per process, since every connection keeps what it prepared.
 */
const MAX_PREPARED = 500;
const LIST_STATEMENT = /\b(order\s+by|limit)\b/i;
const names = new Map<string, string>();
/** Texts a server refused to run prepared (a schema change altered their result): unnamed from then on. */
const refused = new Set<string>();

export function markPrepared(text: string, options: { list?: boolean } = {}): void {
  if (names.has(text) || refused.has(text) || names.size >= MAX_PREPARED || (!options.list && LIST_STATEMENT.test(text))) return;
  names.set(text, `herald_${names.size + 1}`);
}

/** The statement name for a marked text, if any. */
export function preparedName(text: string): string | undefined {
  return names.get(text);
}

/**
 * Runs of a statement on one connection after which it is prepared again, under a new name: 256, 4,096, 65,536.
 * PostgreSQL plans a prepared statement for its values five times, then settles on a generic plan when that costs
 * no more, and keeps it for the connection's life unless the table's statistics change. Settled while the tables were
 * small and had no statistics (a fresh schema, autovacuum off or not yet run), that plan can read one row by an index
 * that holds the whole environment, or scan the table: both cheapest at ten rows, and growing with every row since
 * (BENCHMARKS.md, session 14). A new name is planned again at the tables' size of the moment; a few names per
 * statement and connection at most.
 */
const GENERATION_RUNS = [256, 4096, 65_536];

/** The name a marked statement runs under on its `run`-th execution (from 0) on one connection. */
export function preparedGeneration(name: string, run: number): string {
  let generation = 0;
  while (generation < GENERATION_RUNS.length && run >= GENERATION_RUNS[generation]!) generation++;
  return generation === 0 ? name : `${name}_g${generation}`;
}

/**
 * A prepared statement whose result columns changed under it (a migration while the process runs): PostgreSQL refuses
 * it ("cached plan must not change result type") without running it. Its text runs unnamed from then on.
 */
export function isStalePreparedStatement(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
}

export function refusePrepared(text: string): void {
  names.delete(text);
  refused.add(text);
}
