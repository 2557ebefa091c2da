import type pg from 'pg';
import { sql, type CompiledQuery, type Kysely } from 'kysely';

/** A node of PostgreSQL's `explain (format json)` plan, as the plan tests read it. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Plan Rows'?: number;
  /** With `explain (analyze)`. */
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** A plan's nodes, the root first, depth first. */
export const nodesOf = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];

let prepared = 0;

/**
 * The generic plan of a statement, as a connection that prepared it keeps it (plan_cache_mode = force_generic_plan):
 * the plan PostgreSQL may settle on after five runs, whatever the values. Made at once (PREPARE, then EXPLAIN EXECUTE)
 * from the tables as they are, so a schema of the shared `test` database is enough: a plan-cache reset (any CREATE or
 * DROP SCHEMA of a parallel file) in between plans it again from the same tables. A test that keeps a plan made
 * earlier and checks it after the tables changed needs a database of its own (preparedEventsDatabase, grow-events.ts).
 */
export async function genericPlanOf(pool: pg.Pool, query: CompiledQuery): Promise<PlanNode[]> {
  const client = await pool.connect();
  const name = `generic_plan_${++prepared}`;
  try {
    await client.query('set plan_cache_mode = force_generic_plan');
    await client.query(`prepare ${name} as ${query.sql}`);
    const values = query.parameters.map((value) => (value === null ? 'null' : typeof value === 'number' ? String(value) : client.escapeLiteral(String(value))));
    const { rows } = await client.query(`explain (format json) execute ${name}(${values.join(', ')})`);
    return nodesOf((rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
  } finally {
    await client.query(`deallocate ${name}`).catch(() => undefined);
    await client.query('reset plan_cache_mode');
    client.release();
  }
}

/** How many times the connection of `db` ran its prepared statement `name` by the generic plan (0 when not prepared). */
export async function genericPlansOf(db: Kysely<any>, name: string): Promise<number> {
  const { rows } = await sql<{ generic_plans: string }>`select generic_plans from pg_prepared_statements where name = ${name}`.execute(db);
  return Number(rows[0]?.generic_plans ?? 0);
}

/**
 * The nodes of `explain (analyze)` of the statement `name` prepared on the one connection of `db`, executed with the
 * values of `query` (EXECUTE takes them as literals; the statements' own are strings and numbers).
 */
export async function executedPlanOf(db: Kysely<any>, name: string, query: CompiledQuery): Promise<PlanNode[]> {
  const values = (query.parameters as unknown[]).map((value) => (typeof value === 'number' ? String(value) : `'${String(value).replaceAll("'", "''")}'`));
  const { rows } = await sql.raw(`explain (analyze, format json) execute ${name}(${values.join(', ')})`).execute(db);
  return nodesOf(((rows[0] as any)['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
}

/** The plan's reads of tables and indexes, `<Node Type> <Index Name>`, the root first (writes left out). */
export const scansOf = (nodes: PlanNode[]): string[] =>
  nodes.filter((node) => node['Relation Name'] !== undefined && node['Node Type'] !== 'ModifyTable').map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`.trim());

/** A statement with its array parameters as array literals, which genericPlanOf passes as text. */
export const withArrayLiterals = (query: CompiledQuery): CompiledQuery => ({
  ...query,
  parameters: query.parameters.map((value) => (Array.isArray(value) ? `{${value.map((item) => JSON.stringify(String(item))).join(',')}}` : value)),
});
