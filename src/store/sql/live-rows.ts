import { sql } from 'kysely';

/**
 * The value for `deleted = 0` conditions, written into the SQL as a literal. The unique indexes on subscribers,
 * workflows and integrations are partial (`WHERE deleted = 0`), and SQLite uses a partial index only when the query
 * states the same literal: with a bound parameter, looking up one subscriber scanned every subscriber of the
 * environment.
 */
export const NOT_DELETED = sql.lit(0);
