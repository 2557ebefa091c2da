import type { CompiledQuery, Compilable, InsertQueryBuilder, Kysely, QueryResult } from 'kysely';
import type { Database } from './schema.js';
import type { SqlDialectName } from './sql-store.js';
import { markPrepared } from '../postgres/prepared-statements.js';

/**
 * Queries on the trigger and delivery paths, built and compiled by Kysely once per shape and afterwards only given
 * new parameter values. Kysely builds an immutable tree and compiles it to SQL on every call (10–13 µs for an
 * 18-column insert or a 10-column update on the benchmark machine); with about twenty statements per trigger that
 * was a fifth of the server's CPU in `npm run bench`.
 *
 * The first call for a shape builds the query with placeholder values, compiles it, and records which compiled
 * parameter holds which value; later calls copy the values into that order. So `build` must use its parameters only
 * as values (never to decide the query's structure): a shape is the dialect plus the names of the parameters that
 * are defined, and an undefined parameter is left out of the shape, as Kysely leaves an undefined insert value out.
 */
export class ReusableQuery<P extends Record<string, unknown>, R = unknown> {
  private readonly shapes = new Map<string, CompiledShape>();

  /**
   * `preparedList`: for a statement with ORDER BY or LIMIT, whether the shape of these (placeholder) parameters runs
   * prepared on PostgreSQL all the same (see markPrepared's `list`).
   */
  constructor(
    private readonly build: (db: Kysely<Database>, params: P) => Compilable<R>,
    private readonly preparedList?: (params: P) => boolean,
  ) {}

  async execute(db: Kysely<Database>, dialect: SqlDialectName, params: P): Promise<QueryResult<R>> {
    return (await db.executeQuery(this.compile(db, dialect, params))) as QueryResult<R>;
  }

  /** The statement with these values, not executed (to be combined with others, see `oneStatement`). */
  compile(db: Kysely<Database>, dialect: SqlDialectName, params: P): CompiledQuery<unknown> {
    const names = definedNames(params);
    const key = `${dialect}|${names.join(',')}`;
    let shape = this.shapes.get(key);
    if (!shape) {
      const params = placeholders(names) as P;
      shape = compileShape(this.build(db, params).compile(), names);
      this.shapes.set(key, shape);
      if (dialect === 'postgres') markPrepared(shape.sql, { list: this.preparedList?.(params) ?? false });
    }
    return shape.bind(names.map((name) => params[name]));
  }
}

/**
 * A multi-row INSERT reused per dialect, table columns and row count; `configure` adds what follows VALUES (an
 * ON CONFLICT clause, RETURNING). Rows whose defined columns differ go through Kysely's own insert.
 */
export class ReusableInsert<T extends keyof Database & string> {
  private readonly shapes = new Map<string, CompiledShape>();

  constructor(
    private readonly table: T,
    private readonly configure: (query: InsertQueryBuilder<Database, T, unknown>) => Compilable<unknown> = (query) => query,
  ) {}

  async execute(db: Kysely<Database>, dialect: SqlDialectName, records: ReadonlyArray<object>): Promise<QueryResult<unknown>> {
    return db.executeQuery(this.compile(db, dialect, records));
  }

  /** The statement for these rows, not executed (to be combined with others, see `oneStatement`). */
  compile(db: Kysely<Database>, dialect: SqlDialectName, records: ReadonlyArray<object>): CompiledQuery<unknown> {
    const rows = records as ReadonlyArray<Record<string, unknown>>;
    const names = definedNames(rows[0] ?? {});
    const sameColumns = rows.every((row) => sameDefinedNames(row, names));
    if (rows.length === 0 || !sameColumns) return this.configure(db.insertInto(this.table).values(rows as never)).compile();
    const key = `${dialect}|${rows.length}|${names.join(',')}`;
    let shape = this.shapes.get(key);
    if (!shape) {
      const placeholderRows = rows.map((_, index) => placeholders(names.map((name) => `${index}.${name}`), names));
      const slots = rows.flatMap((_, index) => names.map((name) => `${index}.${name}`));
      shape = compileShape(this.configure(db.insertInto(this.table).values(placeholderRows as never)).compile(), slots);
      this.shapes.set(key, shape);
      if (dialect === 'postgres') markPrepared(shape.sql);
    }
    const values: unknown[] = [];
    for (const row of rows) for (const name of names) values.push(row[name]);
    return shape.bind(values);
  }
}

const PLACEHOLDER = '\u0000herald-parameter:';

interface CompiledShape {
  sql: string;
  bind(values: unknown[]): CompiledQuery<unknown>;
}

/** Maps each compiled parameter to the value it came from (`slots[i]` is the placeholder of `values[i]`). */
function compileShape(compiled: CompiledQuery<unknown>, slots: string[]): CompiledShape {
  const slotIndex = new Map(slots.map((slot, index) => [`${PLACEHOLDER}${slot}`, index]));
  const used = new Set<number>();
  // For each compiled parameter: the index of its value, or -1 for a constant the query itself holds.
  const sources = compiled.parameters.map((parameter) => {
    const index = typeof parameter === 'string' ? slotIndex.get(parameter) : undefined;
    if (index === undefined) {
      if (typeof parameter === 'string' && parameter.startsWith(PLACEHOLDER)) throw new Error(`unknown placeholder ${parameter}`);
      return -1;
    }
    used.add(index);
    return index;
  });
  if (used.size !== slots.length) {
    const unused = slots.filter((_, index) => !used.has(index));
    throw new Error(`reusable query: ${unused.join(', ')} did not become parameters of ${compiled.sql}`);
  }
  const constants = compiled.parameters;
  return {
    sql: compiled.sql,
    bind(values) {
      const parameters = sources.map((source, position) => (source === -1 ? constants[position] : values[source]));
      return { ...compiled, parameters };
    },
  };
}

function placeholders(slots: string[], names: string[] = slots): Record<string, string> {
  const result: Record<string, string> = {};
  names.forEach((name, index) => (result[name] = `${PLACEHOLDER}${slots[index]}`));
  return result;
}

function definedNames(params: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const name in params) if (params[name] !== undefined) names.push(name);
  return names;
}

function sameDefinedNames(row: Record<string, unknown>, names: string[]): boolean {
  let count = 0;
  for (const name in row) {
    if (row[name] === undefined) continue;
    if (names[count] !== name) return false;
    count++;
  }
  return count === names.length;
}
