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

/**
 * A filter on the normalised context keys (`context_keys_norm = ?`, `column` as the query names it). The context
 * indexes of messages and notifications hold only rows with keys (migration 0038: `WHERE context_keys_norm <> ''`, as
 * most events and messages have none and each wrote an entry), and neither SQLite nor PostgreSQL can tell from a bound
 * value that it is not '': the condition of the partial index is stated as written in the migration, a literal beside
 * the value, so both use it (SQLite matches the index's WHERE term by term; PostgreSQL proves it from the query's
 * clauses, for generic plans too). A filter for no keys ('') reads the environment's rows in time order instead.
 */
export function contextKeysAre(column: string, norm: string): RawBuilder<SqlBool> {
  if (norm === '') return sql<SqlBool>`${sql.ref(column)} = ${norm}`;
  return sql<SqlBool>`(${sql.ref(column)} = ${norm} and ${hasContextKeys(column)})`;
}

/** The condition of the partial context indexes (migration 0038), as written there: for a filter that binds its keys. */
export function hasContextKeys(column: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} <> ''`;
}
