import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../sql/schema.js';

/** PostgreSQL for scale-out mode: a pooled connection; queries are the shared ones in store/sql/. */
export function openPostgres(connectionString: string, poolSize = 10): Kysely<Database> {
  const pool = new pg.Pool({ connectionString, max: poolSize });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
