/**
 * PostgreSQL: the shard of a hot counter row (message_counters' environment-wide scopes, overview_counts,
 * overview_latency) written by a delivery, computed by the database as the writing connection's own number: its
 * backend's process id modulo BACKEND_SHARDS. A counter row is locked from the write that adds to it until that
 * write's commit is flushed; with the shard picked by a hash of the message or job id (8 shards), a delivery's held
 * write picked three independent shards and with ten connections writing at once nearly every write waited on
 * another's uncommitted row (`Lock:transactionid`, BENCHMARKS.md session 19). Connections of one pool are opened in
 * a burst and get near-consecutive process ids, so the writes running at one moment (one per connection) add to
 * different rows, and one write's rows all carry the same shard. A table holds at most one row per key and shard
 * number ever used, however many connections came and went.
 *
 * Readers sum every shard of a key whatever its number (rows written with the older hash shards 0-7 included), so
 * the counts stay exact; a decrement may land on another shard than its increment (its row's count then goes below
 * zero, the key's sum does not).
 */
export const BACKEND_SHARDS = 32;
export const BACKEND_SHARD_SQL = `(pg_backend_pid() % ${BACKEND_SHARDS})`;
