import type { CompiledQuery, Kysely } from 'kysely';

/**
 * Runs several reads as one synchronous block on the embedded database's single connection: nothing else runs between
 * them, so they see one state of the data (a snapshot) without a transaction. Made by store/sqlite for its top-level
 * Kysely instance only; a transaction's instance has none (its reads are already ordered with its writes).
 */
export interface SnapshotReader {
  /** Waits for any explicit transaction to end, then runs `work` at once; `read` returns a statement's rows. */
  readTogether<T>(work: (read: <R>(query: CompiledQuery<R>) => R[]) => T): Promise<T>;
}

const readers = new WeakMap<Kysely<any>, SnapshotReader>();

export function registerSnapshotReader(db: Kysely<any>, reader: SnapshotReader): void {
  readers.set(db, reader);
}

export function snapshotReaderOf(db: Kysely<any>): SnapshotReader | undefined {
  return readers.get(db);
}
