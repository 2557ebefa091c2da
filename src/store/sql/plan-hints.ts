import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * `environment_id = ?` written so that SQLite checks it on the rows it found instead of searching an index with it.
 * For lookups by a list of primary keys (`id IN (...)`): without statistics SQLite prefers an index that starts with
 * `environment_id` (such as messages `(environment_id, deleted, created_at, id)`) and then reads every row of the
 * environment, where the primary key reads ten. PostgreSQL does the same without statistics (a fresh table before its
 * first ANALYZE): notifications `(environment_id, transaction_id, ...)` for two ids. `|| ''` hides the column from
 * index selection (the documented unary `+` does the same on SQLite but is not valid on a text column in
 * PostgreSQL). Only for single-table queries: the column name is not qualified.
 */
export function environmentIs(environmentId: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref('environment_id')} || '' = ${environmentId}`;
}
