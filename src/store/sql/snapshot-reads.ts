import type { CompiledQuery, Kysely, QueryResult } from 'kysely';

/**
 * Runs several reads as one synchronous block on the embedded database's single connection: nothing else runs between
 * them, so they see one state of the data (a snapshot) without a transaction. Made by store/sqlite for its top-level
 * Kysely instance only; a transaction's instance has none (its reads are already ordered with its writes).
 */
export interface SnapshotReader {
  /**
   * Waits for any explicit transaction to end, then runs `work` at once; `read` returns a statement's rows, `values`
   * the value of each row's first (only) column, without an array or object per row.
   */
  readTogether<T>(work: (read: ReadRows, values: ReadValues) => T): Promise<T>;
}

/** A statement to read: a Kysely CompiledQuery, or a SQL text written once with its values (no Kysely build per read). */
export type SqlRead<R> = CompiledQuery<R> | { readonly sql: string; readonly parameters: readonly unknown[] };
export type ReadRows = <R>(query: SqlRead<R>) => R[];
export type ReadValues = <V>(query: SqlRead<unknown>) => V[];

/**
 * The same for writes: several statements as one synchronous block, all or nothing, durable when the promise resolves
 * (the embedded store's held writes, `SqlStore.batch`). Nothing else runs between them, yet nothing waits for them
 * either: unlike a transaction, the block never spans an await.
 */
export interface SynchronousWriter {
  /**
   * Waits for any explicit transaction to end, then runs `work` at once; `run` executes one statement, `addAtCommit`
   * adds to a counter row written at the shared commit (kept only when the whole block succeeds).
   */
  writeTogether<T>(work: (run: (query: CompiledQuery) => QueryResult<unknown>, addAtCommit: AddAtCommit) => T): Promise<T>;
}

/**
 * Counter rows that many blocks of one commit add to (the messages list's totals, the overview's counts): summed by
 * `key` over the blocks of the commit and written once per row, in the same transaction just before its commit,
 * instead of one upsert of the same hot row per block.
 */
export interface CommitSums<R> {
  /** The upserts that add each summed row's count. */
  write(rows: Array<{ row: R; count: number }>): CompiledQuery[];
}

export type AddAtCommit = <R>(sums: CommitSums<R>, key: string, row: R, count: number) => void;

const readers = new WeakMap<Kysely<any>, SnapshotReader & Partial<SynchronousWriter>>();

export function registerSnapshotReader(db: Kysely<any>, reader: SnapshotReader & Partial<SynchronousWriter>): void {
  readers.set(db, reader);
}

export function snapshotReaderOf(db: Kysely<any>): SnapshotReader | undefined {
  return readers.get(db);
}

export function synchronousWriterOf(db: Kysely<any>): SynchronousWriter | undefined {
  const writer = readers.get(db);
  return writer?.writeTogether ? (writer as SynchronousWriter) : undefined;
}
