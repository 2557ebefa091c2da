import type BetterSqlite3 from 'better-sqlite3';
import {
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type LimitNode,
  type QueryResult,
} from 'kysely';
import type { AddAtCommit, CommitSums, ReadRows, ReadValues, SqlRead } from '../sql/snapshot-reads.js';

/**
 * Kysely's SQLite driver with group commit. SQLite in WAL mode spends most of a small write on its commit (writing
 * every touched table and index page to the WAL), and Herald's trigger and delivery paths are many small writes from
 * many concurrent requests and jobs. So writes made outside an explicit transaction join one shared transaction that
 * commits once per event-loop turn (`setImmediate`), and each write's promise resolves only after that commit:
 * whoever awaits a write (a 201, a queue acknowledgement) still knows it is durable, but 50 concurrent triggers cost
 * one commit instead of 100. Profiles of `npm run bench` before this put half the server's CPU in SQLite commits.
 *
 * Explicit transactions (`db.transaction()`) run as a savepoint inside the shared transaction; while one is open every
 * other statement waits for it (as with Kysely's own driver, whose mutex serialised them), and its commit resolves
 * after the shared commit. Reads run at once and see the shared transaction's writes (the same connection): a reader
 * may see a write a few microseconds before it is durable, never one that its own flow cannot see.
 */
export class GroupCommitSqliteDriver implements Driver {
  private group?: PendingGroup;
  private commitScheduled = false;
  private commitDue = false;
  /** The connection whose explicit transaction is open, if any. */
  private explicit?: GroupCommitConnection;
  private explicitEnded?: { promise: Promise<void>; resolve(): void };
  private closed = false;
  /** readTogether's `read` and `values`, made once. */
  private readonly readRows: ReadRows = <R>(query: SqlRead<R>) => readRows(this.sqlite.prepare(query.sql), query.parameters as unknown[]) as R[];
  private readonly readValues: ReadValues = <V>(query: SqlRead<unknown>) => readValues(this.sqlite.prepare(query.sql), query.parameters as unknown[]) as V[];

  /** `beforeClose` runs first in `destroy()` (connection.ts stops the background checkpoint's thread there). */
  constructor(
    readonly sqlite: BetterSqlite3.Database,
    private readonly beforeClose?: () => Promise<void>,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new GroupCommitConnection(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    while (this.explicit && this.explicit !== connection) await this.explicitEnded!.promise;
    this.openGroup();
    this.sqlite.exec('savepoint herald_tx');
    this.explicit = connection as GroupCommitConnection;
    let resolve!: () => void;
    const promise = new Promise<void>((done) => (resolve = done));
    this.explicitEnded = { promise, resolve };
  }

  async commitTransaction(): Promise<void> {
    const group = this.group;
    try {
      this.sqlite.exec('release herald_tx');
    } catch (error) {
      this.endExplicit();
      throw error;
    }
    const durable = group ? group.join() : Promise.resolve();
    this.endExplicit();
    await durable;
  }

  async rollbackTransaction(): Promise<void> {
    try {
      if (this.sqlite.inTransaction) {
        this.sqlite.exec('rollback to herald_tx');
        this.sqlite.exec('release herald_tx');
      }
    } finally {
      this.endExplicit();
    }
  }

  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.beforeClose?.();
    if (this.group && !this.explicit) this.commitGroup();
    // Closing inside an explicit transaction rolls the shared one back: its writers learn they were not committed.
    if (this.group) this.abandonGroup(new Error('the database was closed before these writes were committed'));
    this.sqlite.close();
  }

  /**
   * SnapshotReader: reads with nothing in between. Like a read outside a transaction it waits for an explicit
   * transaction to end (never seeing writes that may yet roll back), then runs `work` without yielding.
   */
  async readTogether<T>(work: (read: ReadRows, values: ReadValues) => T): Promise<T> {
    while (this.explicit) await this.explicitEnded!.promise;
    if (this.closed) throw closedError();
    const read = this.readRows;
    const values = this.readValues;
    // Inside the shared write transaction the reads already share one read lock. Outside it, each statement in
    // autocommit takes and drops WAL mode's read lock (two fcntl calls and an fstat: ~6 µs a statement, raw
    // better-sqlite3 on profile-lists' data), so the block's statements run in one read transaction: the lock once
    // for all of them (an events page reads 2-4 statements). `begin` is deferred: it reads and writes nothing itself.
    if (this.sqlite.inTransaction) return work(read, values);
    this.sqlite.prepare('begin').run();
    try {
      return work(read, values);
    } finally {
      // A read-only transaction's commit only drops its lock; an I/O error may have ended it already.
      if (this.sqlite.inTransaction) this.sqlite.prepare('commit').run();
    }
  }

  /**
   * SynchronousWriter: several writes with nothing in between, all or nothing (a savepoint inside the shared
   * transaction), then one wait for the shared commit. Unlike an explicit transaction it never holds other statements
   * across an await: `work` runs to its end before anything else can. Waits first for an explicit transaction to end.
   */
  async writeTogether<T>(work: (run: (query: CompiledQuery) => QueryResult<unknown>, addAtCommit: AddAtCommit) => T): Promise<T> {
    while (this.explicit) await this.explicitEnded!.promise;
    this.openGroup();
    const group = this.group!;
    this.sqlite.exec('savepoint herald_together');
    let result: T;
    // Added to the group only once the block is released: a block that fails adds nothing.
    const added: Array<[CommitSums<unknown>, string, unknown, number]> = [];
    try {
      result = work(
        (query) => this.run(this.sqlite.prepare(query.sql), query.parameters as unknown[]),
        (sums, key, row, count) => void added.push([sums as CommitSums<unknown>, key, row, count]),
      );
      this.sqlite.exec('release herald_together');
      for (const [sums, key, row, count] of added) group.add(sums, key, row, count);
    } catch (error) {
      // An error that ended the shared transaction (I/O) has already failed the group's waiters (see `run`).
      if (this.sqlite.inTransaction) {
        this.sqlite.exec('rollback to herald_together');
        this.sqlite.exec('release herald_together');
      }
      throw error;
    }
    await group.join();
    return result;
  }

  /** Runs one statement for `connection` (see the class comment for when it waits). */
  async execute(connection: GroupCommitConnection, query: CompiledQuery): Promise<QueryResult<unknown>> {
    // Checked and acted on without an await in between: a transaction may begin at any await.
    while (this.explicit && this.explicit !== connection) await this.explicitEnded!.promise;
    const statement = this.sqlite.prepare(query.sql);
    const parameters = query.parameters as unknown[];
    if (this.explicit === connection || statement.readonly) return this.run(statement, parameters);
    this.openGroup();
    const group = this.group!;
    const result = this.run(statement, parameters);
    await group.join();
    return result;
  }

  private run(statement: BetterSqlite3.Statement, parameters: unknown[]): QueryResult<unknown> {
    const groupBefore = this.group;
    try {
      if (statement.reader) return { rows: readRows(statement, parameters) };
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    } catch (error) {
      // Most errors (constraints) undo just the statement; a few (disk full, I/O) roll back the whole transaction.
      if (groupBefore && !this.sqlite.inTransaction) this.abandonGroup(error);
      throw error;
    }
  }

  private openGroup(): void {
    if (this.closed) throw closedError();
    if (!this.group) {
      this.sqlite.exec('begin immediate');
      this.group = new PendingGroup();
    }
    if (!this.commitScheduled) {
      this.commitScheduled = true;
      setImmediate(() => {
        this.commitScheduled = false;
        if (this.explicit) this.commitDue = true;
        else this.commitGroup();
      });
    }
  }

  private endExplicit(): void {
    const ended = this.explicitEnded;
    this.explicit = undefined;
    this.explicitEnded = undefined;
    if (this.commitDue) {
      this.commitDue = false;
      this.commitGroup();
    }
    ended?.resolve();
  }

  private commitGroup(): void {
    const group = this.group;
    if (!group) return;
    this.group = undefined;
    try {
      // The summed counter rows of the group's blocks, in its transaction: committed with them or not at all.
      for (const query of group.sumStatements()) this.run(this.sqlite.prepare(query.sql), query.parameters as unknown[]);
      this.sqlite.exec('commit');
    } catch (error) {
      if (this.sqlite.inTransaction) this.sqlite.exec('rollback');
      group.settle(error);
      return;
    }
    group.settle();
  }

  private abandonGroup(error: unknown): void {
    const group = this.group;
    this.group = undefined;
    group?.settle(error);
  }
}

/** The writes waiting for one shared commit. */
class PendingGroup {
  private readonly waiters: Array<{ resolve(): void; reject(error: unknown): void }> = [];
  private sums?: Map<CommitSums<unknown>, Map<string, { row: unknown; count: number }>>;

  add(sums: CommitSums<unknown>, key: string, row: unknown, count: number): void {
    this.sums ??= new Map();
    let rows = this.sums.get(sums);
    if (!rows) this.sums.set(sums, (rows = new Map()));
    const existing = rows.get(key);
    if (existing) existing.count += count;
    else rows.set(key, { row, count });
  }

  sumStatements(): CompiledQuery[] {
    if (!this.sums) return [];
    const statements: CompiledQuery[] = [];
    for (const [sums, rows] of this.sums) {
      const changed = [...rows.values()].filter((entry) => entry.count !== 0);
      if (changed.length > 0) statements.push(...sums.write(changed));
    }
    return statements;
  }

  join(): Promise<void> {
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  settle(error?: unknown): void {
    for (const waiter of this.waiters) {
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }
}

class GroupCommitConnection implements DatabaseConnection {
  constructor(private readonly driver: GroupCommitSqliteDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute(this, query) as Promise<QueryResult<R>>;
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by the embedded store');
  }
}

export function groupCommitSqliteDialect(sqlite: BetterSqlite3.Database, driver = new GroupCommitSqliteDriver(sqlite)): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => driver,
    createIntrospector: (db: Kysely<unknown>) => new SqliteIntrospector(db),
    createQueryCompiler: () => new HeraldSqliteQueryCompiler(),
  };
}

/**
 * Kysely's SQLite compiler with every LIMIT written `limit cast(? as integer)`. SQLite (3.53 here) reads the value
 * bound to a bare `limit ?` while planning (sqlite3ExprIsInteger with the parse context) and marks the statement to be
 * planned again whenever that parameter is bound: every run of a cached statement with `limit ?` was prepared anew
 * (raw better-sqlite3, 11 index rows: 10.4-10.8 µs with `limit ?`, 5.3-5.7 with `limit 11` or `limit cast(? as
 * integer)`; a second's count by `limit ?`, one row: 5.9-7.1 µs against 2.0-2.2). Inside a cast the value is not
 * read at planning, and the cast of an integer is that integer: the same rows. OFFSET is not read that way.
 */
export class HeraldSqliteQueryCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    this.append('limit cast(');
    this.visitNode(node.limit);
    this.append(' as integer)');
  }
}

/** A reading statement switched to raw mode, with the function that turns one of its rows into an object. */
const rowBuilders = new WeakMap<BetterSqlite3.Statement, (row: unknown[]) => Record<string, unknown>>();

/**
 * `statement.all()`, with rows read as arrays and turned into objects in JavaScript. better-sqlite3 builds each row
 * object through V8's C++ API, one property at a time: for a page of messages (11 rows × 18 columns) that was two
 * thirds of the statement's time. A function compiled once per statement from its column names builds every row as
 * one object literal of a fixed shape instead. Statements are cached per SQL text (see `openSqlite`), so the compiled
 * function is reused; column names come from Herald's own queries. Like better-sqlite3, a later column of the same
 * name wins.
 */
function readRows(statement: BetterSqlite3.Statement, parameters: unknown[]): Array<Record<string, unknown>> {
  let build = rowBuilders.get(statement);
  if (!build) {
    plucked.delete(statement);
    statement.raw(true);
    const fields = statement.columns().map((column, index) => `${JSON.stringify(column.name)}: row[${index}]`);
    build = new Function('row', `return { ${fields.join(', ')} };`) as (row: unknown[]) => Record<string, unknown>;
    rowBuilders.set(statement, build);
  }
  return (statement.all(parameters) as unknown[][]).map(build);
}

/** Reading statements switched to pluck mode (readValues), out of raw mode (readRows). */
const plucked = new WeakSet<BetterSqlite3.Statement>();

/**
 * `statement.all()` of a statement of one column, as that column's values: better-sqlite3 then makes no array per row
 * (in raw mode it makes one and sets each value into it through V8's C++ API, ~0.1 µs a value; an events page reads
 * 11 rows). A statement read both ways is switched back and forth (Herald reads each text one way).
 */
function readValues(statement: BetterSqlite3.Statement, parameters: unknown[]): unknown[] {
  if (!plucked.has(statement)) {
    rowBuilders.delete(statement);
    statement.pluck(true);
    plucked.add(statement);
  }
  return statement.all(parameters);
}

/**
 * The error of a statement after close. Its message is better-sqlite3's own for a closed handle, which the HTTP error
 * mapping (isUnavailable) answers with 503 and Retry-After, as for any lost database, instead of a 500.
 */
function closedError(): Error {
  return new Error('The database connection is not open');
}
