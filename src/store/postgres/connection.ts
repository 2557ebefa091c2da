import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../sql/schema.js';
import { isStalePreparedStatement, preparedGeneration, preparedName, refusePrepared } from './prepared-statements.js';
import { resultGathering, type ResultGathering } from './result-gathering.js';

export interface PostgresOptions {
  /**
   * Results that arrive in one turn of the event loop continue together, after it (result-gathering.ts): for a process
   * serving HTTP (`herald api`). Off by default (workers, CLI commands, tests' direct connections).
   */
  gatherResults?: boolean;
}

/** PostgreSQL for scale-out mode: a pooled connection; queries are the shared ones in store/sql/. */
export function openPostgres(connectionString: string, poolSize = 10, options: PostgresOptions = {}): Kysely<Database> {
  const gather = options.gatherResults ? resultGathering() : undefined;
  const pool = new pg.Pool({ connectionString, max: poolSize });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  // pg-pool listens for errors on idle clients only: a checked-out client whose server goes away between two
  // queries would emit an unhandled 'error' and kill the process. Its next query fails instead (a 503), and
  // the pool discards it on release because it is no longer queryable.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    runMarkedStatementsPrepared(client, gather);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

const pools = new WeakMap<Kysely<Database>, pg.Pool>();

/** Connections checked out of the pool and queries waiting for one (`herald_db_pool_in_use`), read at scrape time. */
export function poolUsage(db: Kysely<Database>): { inUse: number; waiting: number } {
  const pool = pools.get(db);
  return pool ? { inUse: pool.totalCount - pool.idleCount, waiting: pool.waitingCount } : { inUse: 0, waiting: 0 };
}

/**
 * Kysely runs every statement as `client.query(text, values)`: a text marked for preparing (store/postgres/
 * prepared-statements.ts) runs under its name instead, a new name after so many runs on this connection (see
 * preparedGeneration). One refused as stale runs again unnamed, once. With `gather`, a read's result (not an
 * error, nor a write's) is handed on through it.
 */
function runMarkedStatementsPrepared(client: pg.PoolClient, gather: ResultGathering | undefined): void {
  const direct = client.query.bind(client) as (...args: unknown[]) => unknown;
  // Kysely passes (text, values) and awaits the promise; a call with a callback or a submittable (none in Herald)
  // returns no promise and is left as it is.
  // Reads only: a write's result is often awaited by the next batch of a serial chain (CoalescedBatches' trigger
  // inserts), which any wait lengthens; measured, gathering them cost the trigger load ~30 % of its rate.
  const gatherReads = (result: unknown) => ((result as { command?: unknown } | undefined)?.command === 'SELECT' ? gather!(result) : result);
  const query = gather
    ? (...args: unknown[]) => {
        const result = direct(...args);
        return result instanceof Promise ? result.then(gatherReads) : result;
      }
    : direct;
  const runs = new Map<string, number>();
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    const marked = typeof text === 'string' && Array.isArray(values) && values.length > 0 && args.length === 2 ? preparedName(text) : undefined;
    if (marked === undefined) return query(...args);
    const run = runs.get(marked) ?? 0;
    runs.set(marked, run + 1);
    const name = preparedGeneration(marked, run);
    return (query({ name, text, values }) as Promise<unknown>).catch((error: unknown) => {
      if (!isStalePreparedStatement(error)) throw error;
      refusePrepared(text as string);
      return query(text, values);
    });
  };
}
