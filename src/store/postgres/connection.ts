import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../sql/schema.js';

/** PostgreSQL for scale-out mode: a pooled connection; queries are the shared ones in store/sql/. */
export function openPostgres(connectionString: string, poolSize = 10): Kysely<Database> {
  const pool = new pg.Pool({ connectionString, max: poolSize });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  // pg-pool listens for errors on idle clients only: a checked-out client whose server goes away between two
  // queries would emit an unhandled 'error' and kill the process. Its next query fails instead (a 503), and
  // the pool discards it on release because it is no longer queryable.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
