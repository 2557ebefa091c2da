import { CompiledQuery } from 'kysely';
import { markPrepared } from '../postgres/prepared-statements.js';
import { BACKEND_SHARD_SQL, BACKEND_SHARDS } from './backend-shard.js';

/** A statement to run before the main one, under a name the statements after it may read (its RETURNING rows). */
export interface NamedStatement {
  name: string;
  query: CompiledQuery<unknown>;
}

/**
 * PostgreSQL: several writes sent as one statement, so one round trip instead of one per statement plus BEGIN and
 * COMMIT, and still all or nothing (a single statement is atomic, inside a transaction or not). Every statement but
 * the last becomes a data-modifying CTE, `WITH s0 AS (...), s1 AS (...) <last>`, and the result is the last one's.
 * In the scale-out benchmark each round trip costs the API/worker process a socket write and a read, the largest
 * part of its CPU per trigger, which is why the hot write paths use this.
 *
 * The sub-statements see one snapshot and do not see each other's rows (PostgreSQL runs them as one query), so
 * combine only statements that do not read what an earlier one wrote, except through a named statement's
 * RETURNING rows. No foreign keys relate Herald's tables, so the order in which PostgreSQL applies them does not
 * matter. Statements must come from Kysely's compiler (every value a `$n` parameter); the parameters of each are
 * renumbered after those of the statements before it.
 */
export function oneStatement(before: ReadonlyArray<CompiledQuery<unknown> | NamedStatement>, last: CompiledQuery<unknown>): CompiledQuery<unknown> {
  if (before.length === 0) return last;
  const parameters: unknown[] = [];
  let key = '';
  for (const [index, statement] of before.entries()) {
    const query = 'name' in statement ? statement.query : statement;
    key += `${'name' in statement ? statement.name : `s${index}`}\u0000${query.sql}\u0001`;
    for (const parameter of query.parameters) parameters.push(parameter);
  }
  key += last.sql;
  for (const parameter of last.parameters) parameters.push(parameter);
  return CompiledQuery.raw(combinedTextOf(key, () => combinedText(before, last)), parameters);
}

/**
 * The combined texts by their parts' names and texts: the hot paths combine the same few shapes (a delivery's held
 * write is one of a handful), and renumbering the parameters of a dozen statements on every call was 4-5 % of the
 * scaled-out worker's CPU (BENCHMARKS.md, session 14). Bounded: shapes that vary (row counts) stop being kept.
 */
const combinedTexts = new Map<string, string>();
const MAX_COMBINED_TEXTS = 500;

/**
 * The combined text of `key`, made once (up to MAX_COMBINED_TEXTS kept) and marked prepared: the hot write paths
 * combine the same few shapes over and over (PostgreSQL only uses these).
 */
function combinedTextOf(key: string, make: () => string): string {
  let text = combinedTexts.get(key);
  if (text === undefined) {
    text = make();
    if (combinedTexts.size < MAX_COMBINED_TEXTS) combinedTexts.set(key, text);
    markPrepared(text);
  }
  return text;
}

function combinedText(before: ReadonlyArray<CompiledQuery<unknown> | NamedStatement>, last: CompiledQuery<unknown>): string {
  let offset = 0;
  const add = (query: CompiledQuery<unknown>): string => {
    if (/^\s*with\b/i.test(query.sql)) throw new Error('oneStatement: a statement with its own WITH cannot become a CTE');
    const text = renumberParameters(query.sql, offset);
    offset += query.parameters.length;
    return text;
  };
  const ctes = before.map((statement, index) => {
    const named = 'name' in statement ? statement : { name: `s${index}`, query: statement };
    if (!/^[a-z_][a-z0-9_]*$/.test(named.name)) throw new Error(`oneStatement: invalid statement name ${named.name}`);
    return `${named.name} as (${add(named.query)})`;
  });
  return `with ${ctes.join(', ')} ${add(last)}`;
}

/**
 * Adds `offset` to every `$n` parameter reference of a PostgreSQL statement. Quoted identifiers and string literals
 * are copied unchanged, so a `$1` inside one is not a parameter.
 */
export function renumberParameters(text: string, offset: number): string {
  if (offset === 0) return text;
  return text.replace(/"(?:[^"]|"")*"|'(?:[^']|'')*'|\$(\d+)/g, (token, number: string | undefined) =>
    number === undefined ? token : `$${Number(number) + offset}`,
  );
}

/** One write of `oneStatementOfMany`: what `oneStatement(before, last)` would send alone. */
export interface StatementGroup {
  before: ReadonlyArray<CompiledQuery<unknown> | NamedStatement>;
  last: CompiledQuery<unknown>;
}

/**
 * PostgreSQL: several independent writes (`oneStatement`'s groups, e.g. the held writes of concurrent deliveries) as
 * one statement, so they share one round trip and one commit, all or nothing. Every statement of every group becomes
 * a CTE (group i's names get `_<i>`, and its statements' `from <name>` follow), and the statement answers `select 1`
 * (a data-modifying CTE runs whether or not anything reads it). One statement cannot add to one row twice (ON
 * CONFLICT DO UPDATE refuses it), so group i's counter rows of the connection's shard (BACKEND_SHARD_SQL) go to shard
 * `(pid * stride + i) % 32` instead: distinct within the statement for up to `stride` groups, and readers sum every
 * shard. Rows the groups name by value (a subscriber's counters, ids) must differ between groups, or the statement
 * fails: the caller then sends each group alone. The text depends on the groups' texts only, never on their values.
 */
export function oneStatementOfMany(groups: ReadonlyArray<StatementGroup>, stride: number): CompiledQuery<unknown> {
  if (groups.length > stride || stride > BACKEND_SHARDS) throw new Error(`oneStatementOfMany: ${groups.length} groups, stride ${stride}`);
  const parameters: unknown[] = [];
  let key = `${stride}\u0003`;
  for (const { before, last } of groups) {
    for (const [index, statement] of before.entries()) {
      const query = 'name' in statement ? statement.query : statement;
      key += `${'name' in statement ? statement.name : `s${index}`}\u0000${query.sql}\u0001`;
      for (const parameter of query.parameters) parameters.push(parameter);
    }
    key += `${last.sql}\u0002`;
    for (const parameter of last.parameters) parameters.push(parameter);
  }
  return CompiledQuery.raw(combinedTextOf(key, () => manyText(groups, stride)), parameters);
}

function manyText(groups: ReadonlyArray<StatementGroup>, stride: number): string {
  let offset = 0;
  const ctes: string[] = [];
  groups.forEach(({ before, last }, group) => {
    const shard = `((pg_backend_pid() * ${stride} + ${group}) % ${BACKEND_SHARDS})`;
    const renamed = new Map<string, string>();
    [...before, last].forEach((statement, index) => {
      const named = 'name' in statement ? statement : { name: `s${index}`, query: statement };
      if (!/^[a-z_][a-z0-9_]*$/.test(named.name)) throw new Error(`oneStatement: invalid statement name ${named.name}`);
      if (/^\s*with\b/i.test(named.query.sql)) throw new Error('oneStatement: a statement with its own WITH cannot become a CTE');
      let text = renumberParameters(named.query.sql, offset).split(BACKEND_SHARD_SQL).join(shard);
      if (renamed.size > 0) {
        text = text.replace(new RegExp(`\\bfrom\\s+(${[...renamed.keys()].join('|')})\\b`, 'g'), (_match, name: string) => `from ${renamed.get(name)}`);
      }
      offset += named.query.parameters.length;
      const name = `${named.name}_${group}`;
      if ('name' in statement) renamed.set(statement.name, name);
      ctes.push(`${name} as (${text})`);
    });
  });
  return `with ${ctes.join(', ')} select 1`;
}
