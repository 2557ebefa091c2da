/**
 * Bulk seeding in SQL for `npm run bench:data-size`: millions of stored messages written by the database itself
 * (SQLite: a recursive CTE; PostgreSQL: generate_series), from rows Herald wrote.
 *
 * The bench first lets Herald deliver a few real triggers (the templates: their notification events, jobs, execution
 * details and messages). `prepareCloneSeed` records them; `growClones` then inserts copies 1..k of every template row,
 * copy c moved `c × span` seconds back in time (span = the templates' own time span + 1 s, so copies never overlap),
 * with ids of Herald's shape (8 hex digits of the row's creation second, then 16 hex digits unique per table), its
 * references (notification_id, job_id) pointing at the same copy of the parent, and transaction ids `<template's>-s<c>`;
 * every other column is copied as Herald wrote it, so the app reads the rows like its own whatever columns the tables
 * have. Ids, references and transaction ids are also replaced inside the JSON documents and the messages' list texts
 * (and a message's times, which its text holds), so copies are listed from their texts as Herald's rows are. The message_counters totals
 * grow by the templates' counts per copy, as SqlMessageRepository would have counted them.
 *
 * Not copied: triggers, overview counts and webhook rows (the lists read none of them).
 */
export type CloneDialect = 'sqlite' | 'postgres';

/** A connection the seed runs statements on: better-sqlite3 or pg, behind the same two calls. */
export interface SeedConnection {
  dialect: CloneDialect;
  run(sql: string): Promise<void>;
  rows<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /** PostgreSQL: cancels the statement running on this connection (from another connection). */
  cancel?(): Promise<void>;
}

interface ClonedTable {
  table: string;
  /** One hex digit that keeps this table's seeded ids apart from another's. */
  kind: string;
}

const TABLES: ClonedTable[] = [
  { table: 'notifications', kind: '1' },
  { table: 'jobs', kind: '2' },
  { table: 'execution_details', kind: '3' },
  { table: 'messages', kind: '4' },
];

const PARENT_OF: Record<string, string> = { notification_id: 'notifications', job_id: 'jobs' };

export interface CloneSeedState {
  environmentId: string;
  /** Template rows per table. */
  templates: Record<string, number>;
  /** Seconds between two copies. */
  spanSeconds: number;
  /** Copies made so far (the templates themselves are copy 0). */
  copies: number;
}

const mapTable = (table: string) => `bench_seed_${table}`;

function assertId(value: string): void {
  if (!/^[0-9a-z_]+$/i.test(value)) throw new Error(`unexpected identifier ${value}`);
}

/** Records the environment's current rows as the templates. Run once, right after the templates were delivered. */
export async function prepareCloneSeed(db: SeedConnection, environmentId: string): Promise<CloneSeedState> {
  assertId(environmentId);
  const templates: Record<string, number> = {};
  let minMs = Infinity;
  let maxMs = -Infinity;
  for (const { table } of TABLES) {
    await db.run(`drop table if exists ${mapTable(table)}`);
    await db.run(`create table ${mapTable(table)} (id text primary key, idx integer not null, created_at text not null)`);
    await db.run(`insert into ${mapTable(table)} (id, idx, created_at)
      select id, row_number() over (order by created_at, id) - 1, created_at from ${table} where environment_id = '${environmentId}'`);
    const [stats] = await db.rows<{ n: number | string; first: string | null; last: string | null }>(
      `select count(*) as n, min(created_at) as first, max(created_at) as last from ${mapTable(table)}`);
    templates[table] = Number(stats!.n);
    if (stats!.first) minMs = Math.min(minMs, Date.parse(stats!.first));
    if (stats!.last) maxMs = Math.max(maxMs, Date.parse(stats!.last));
  }
  if (!templates.messages) throw new Error('no template messages: deliver some triggers before seeding');
  await db.run(`drop table if exists bench_seed_counters`);
  await db.run(`create table bench_seed_counters as
    select scope, sum(count) as count from message_counters where environment_id = '${environmentId}' group by scope`);
  return { environmentId, templates, spanSeconds: Math.ceil((maxMs - minMs) / 1000) + 1, copies: 0 };
}

/** The copies c (a column `n`) from `from` to `to` inclusive, as a FROM item named `c`, and the WITH clause it needs. */
function copies(dialect: CloneDialect, from: number, to: number): { with: string; from: string } {
  return dialect === 'sqlite'
    ? { with: `with recursive copies(n) as (select ${from} union all select n + 1 from copies where n < ${to}) `, from: 'copies c' }
    : { with: '', from: `generate_series(${from}, ${to}) as c(n)` };
}

/** `timestamp` (an ISO text column) moved back by copy c's shift, as ISO text with milliseconds. */
function shifted(dialect: CloneDialect, timestamp: string, span: number): string {
  return dialect === 'sqlite'
    ? `strftime('%Y-%m-%dT%H:%M:%fZ', ${timestamp}, '-' || (c.n * ${span}) || ' seconds')`
    : `to_char((${timestamp}::timestamptz - (c.n * ${span}) * interval '1 second') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Copy c's id of the template row `map` (a bench_seed_* alias) of a table of the given kind. */
function clonedId(dialect: CloneDialect, map: string, kind: string, templates: number, span: number): string {
  return dialect === 'sqlite'
    ? `(printf('%08x', CAST(strftime('%s', ${map}.created_at, '-' || (c.n * ${span}) || ' seconds') AS INTEGER)) || '${kind}' || printf('%015x', c.n * ${templates} + ${map}.idx))`
    : `(lpad(to_hex(floor(extract(epoch from ${map}.created_at::timestamptz - (c.n * ${span}) * interval '1 second'))::bigint), 8, '0') || '${kind}' || lpad(to_hex(c.n::bigint * ${templates} + ${map}.idx), 15, '0'))`;
}

async function columnsOf(db: SeedConnection, table: string): Promise<string[]> {
  const rows = db.dialect === 'sqlite'
    ? await db.rows<{ name: string }>(`select name from pragma_table_info('${table}')`)
    : await db.rows<{ name: string }>(`select column_name as name from information_schema.columns
        where table_schema = current_schema() and table_name = '${table}' order by ordinal_position`);
  return rows.map((row) => row.name);
}

/** The INSERT … SELECT that writes copies [from, to] of one table's templates. */
async function cloneStatement(db: SeedConnection, state: CloneSeedState, { table, kind }: ClonedTable, from: number, to: number): Promise<string> {
  const columns = await columnsOf(db, table);
  const span = state.spanSeconds;
  const kindOf = (parent: string) => TABLES.find((t) => t.table === parent)!.kind;
  const joins: string[] = [];
  const replacements: Array<[string, string]> = [];
  const expressions = new Map<string, string>();
  const ownId = clonedId(db.dialect, 'm', kind, state.templates[table]!, span);
  expressions.set('id', ownId);
  replacements.push(['t.id', ownId]);
  for (const [column, parent] of Object.entries(PARENT_OF)) {
    if (!columns.includes(column)) continue;
    const alias = `p_${column}`;
    joins.push(`left join ${mapTable(parent)} ${alias} on ${alias}.id = t.${column}`);
    const parentId = clonedId(db.dialect, alias, kindOf(parent), state.templates[parent]!, span);
    expressions.set(column, `case when ${alias}.id is null then t.${column} else ${parentId} end`);
    replacements.push([`t.${column}`, parentId]);
  }
  if (columns.includes('transaction_id')) {
    const transaction = `(t.transaction_id || '-s' || c.n)`;
    expressions.set('transaction_id', transaction);
    replacements.push(['t.transaction_id', transaction]);
  }
  for (const time of ['created_at', 'updated_at']) if (columns.includes(time)) expressions.set(time, shifted(db.dialect, `t.${time}`, span));
  // The documents and a message's list text (0028) hold the ids, references and transaction id, and the message's
  // times (createdAt, updatedAt, deliveredAt, written from one clock reading): each is replaced by the copy's, so a copy
  // is listed from its own text, as Herald's rows are, and reads the same through its document.
  const timeReplacements = (table === 'messages' ? ['created_at', 'updated_at'] : [])
    .filter((time) => columns.includes(time))
    .map((time): [string, string] => [`t.${time}`, shifted(db.dialect, `t.${time}`, span)]);
  const replaced = (column: string) => {
    let text = `t.${column}`;
    // A parent column can be null (a message without a job): replace(x, null, y) is null, replace(x, '', y) is x.
    for (const [original, replacement] of [...replacements, ...timeReplacements]) text = `replace(${text}, coalesce(${original}, ''), coalesce(${replacement}, ''))`;
    return text;
  };
  if (columns.includes('document')) expressions.set('document', replaced('document'));
  if (columns.includes('list_text')) expressions.set('list_text', replaced('list_text'));
  const source = copies(db.dialect, from, to);
  const select = columns.map((column) => expressions.get(column) ?? `t.${column}`).join(', ');
  return `${source.with}insert into ${table} (${columns.join(', ')})
    select ${select} from ${source.from} cross join ${mapTable(table)} m join ${table} t on t.id = m.id ${joins.join(' ')}`;

}

export interface GrowProgress {
  copies: number;
  target: number;
  messages: number;
  elapsedMs: number;
}

/**
 * Adds copies until there are `targetMessages` messages from the seed (templates included; rounded up to whole
 * copies), about `rowsPerBatch` messages per transaction. Returns the new state.
 */
export async function growClones(
  db: SeedConnection,
  state: CloneSeedState,
  targetMessages: number,
  options: {
    rowsPerBatch?: number;
    onProgress?: (progress: GrowProgress) => void;
    /** PostgreSQL: drop the secondary indexes before and build every index after (default true; SQLite: ignored). */
    rebuildIndexes?: boolean;
    onIndexes?: (progress: IndexBuildProgress) => void;
  } = {},
): Promise<CloneSeedState> {
  const perCopy = state.templates.messages!;
  const targetCopies = Math.ceil(targetMessages / perCopy) - 1;
  const perBatch = Math.max(1, Math.floor((options.rowsPerBatch ?? 200_000) / perCopy));
  const started = Date.now();
  let done = state.copies;
  if (done >= targetCopies) return state;
  // PostgreSQL: the tables' indexes are built after the copies are in, as pg_restore does (see setIndexesAside).
  const rebuild = db.dialect === 'postgres' && (options.rebuildIndexes ?? true) ? await setIndexesAside(db) : undefined;
  try {
    done = await growBatches(db, state, done, targetCopies, perBatch, started, options.onProgress);
  } finally {
    await rebuild?.(options.onIndexes);
  }
  return { ...state, copies: done };
}

async function growBatches(
  db: SeedConnection,
  state: CloneSeedState,
  done: number,
  targetCopies: number,
  perBatch: number,
  started: number,
  onProgress: ((progress: GrowProgress) => void) | undefined,
): Promise<number> {
  const perCopy = state.templates.messages!;
  while (done < targetCopies) {
    const from = done + 1;
    const to = Math.min(targetCopies, done + perBatch);
    await db.run('begin');
    try {
      for (const table of TABLES) if (state.templates[table.table]) await db.run(await cloneStatement(db, state, table, from, to));
      await db.run(`insert into message_counters (environment_id, scope, shard, count)
        select '${state.environmentId}', scope, 0, count * ${to - from + 1} from bench_seed_counters where true
        on conflict (environment_id, scope, shard) do update set count = message_counters.count + excluded.count`);
      await db.run('commit');
    } catch (error) {
      await db.run('rollback');
      throw error;
    }
    done = to;
    onProgress?.({ copies: done, target: targetCopies, messages: (done + 1) * perCopy, elapsedMs: Date.now() - started });
  }
  return done;
}

/** The seeded tables' indexes other than their primary keys, as `pg_indexes` defines them. */
async function secondaryIndexes(db: SeedConnection): Promise<Array<{ name: string; definition: string }>> {
  const tables = TABLES.map((t) => `'${t.table}'`).join(', ');
  return db.rows<{ name: string; definition: string }>(`select i.indexname as name, i.indexdef as definition
    from pg_indexes i
    where i.schemaname = current_schema() and i.tablename in (${tables})
      and not exists (select 1 from pg_constraint c where c.conindid = to_regclass(quote_ident(i.schemaname) || '.' || quote_ident(i.indexname)))
    order by i.tablename, i.indexname`);
}

/** The seeded tables' primary-key indexes (the copies' INSERT … SELECT finds its templates through them). */
async function primaryKeyIndexes(db: SeedConnection): Promise<string[]> {
  const tables = TABLES.map((t) => `'${t.table}'`).join(', ');
  const rows = await db.rows<{ name: string }>(`select ci.relname as name
    from pg_constraint c join pg_class ci on ci.oid = c.conindid join pg_class t on t.oid = c.conrelid
    join pg_namespace n on n.oid = t.relnamespace
    where c.contype = 'p' and n.nspname = current_schema() and t.relname in (${tables}) order by t.relname`);
  return rows.map((row) => row.name);
}

export interface IndexBuildProgress {
  index: string;
  elapsedMs: number;
}

/**
 * PostgreSQL bulk-load practice (what pg_restore does): drops the seeded tables' secondary indexes and returns the
 * function that creates them again, from their own definitions, then rebuilds the primary keys (REINDEX, one at a
 * time, so at most one index exists twice). Copies go in to the left of the rows already there (each copy is older),
 * so B-trees grown through them split half-full pages: 1,535 bytes of message indexes per seeded message at 1M
 * (session 16) where 1,000 really delivered messages took ~1,100. A B-tree built in one pass is denser still (leaf
 * pages filled to the index's fillfactor, 90 %): 773 bytes at 100k and 1M. So the seeded data set is now smaller
 * than a real installation's of the same size, not larger; the figures are in BENCHMARKS.md (session 26). Nothing
 * else reads the tables meanwhile (the bench measures after the seed).
 */
async function setIndexesAside(db: SeedConnection): Promise<(onIndex?: (progress: IndexBuildProgress) => void) => Promise<void>> {
  const indexes = await secondaryIndexes(db);
  const primaryKeys = await primaryKeyIndexes(db);
  for (const { name } of indexes) await db.run(`drop index ${quoteIdentifier(name)}`);
  return async (onIndex) => {
    // A session setting, for this connection's sorts only (the server's configuration is left alone).
    await db.run(`set maintenance_work_mem = '512MB'`);
    try {
      for (const { name, definition } of indexes) {
        const started = Date.now();
        await db.run(definition);
        onIndex?.({ index: name, elapsedMs: Date.now() - started });
      }
      for (const name of primaryKeys) {
        const started = Date.now();
        await db.run(`reindex index ${quoteIdentifier(name)}`);
        onIndex?.({ index: name, elapsedMs: Date.now() - started });
      }
    } finally {
      await db.run('reset maintenance_work_mem');
    }
  };
}

function quoteIdentifier(name: string): string {
  assertId(name);
  return `"${name}"`;
}

/** Messages in the seed (templates and copies). */
export function seededMessages(state: CloneSeedState): number {
  return (state.copies + 1) * state.templates.messages!;
}

/** A seed connection to Herald's SQLite file (Herald stopped meanwhile: one writer). */
export async function openSqliteSeedConnection(file: string): Promise<SeedConnection & { close(): Promise<void> }> {
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  // A short wait in SQLite, the rest here between tries: busy_timeout sleeps the thread, and in the test the Herald
  // holding the lock runs in this very thread (it could not commit while the seed waits). `begin immediate`: a
  // transaction that has the write lock from its start never meets a busy writer half-way.
  sqlite.pragma('busy_timeout = 100');
  return {
    dialect: 'sqlite',
    async run(sql) {
      const statement = sql === 'begin' ? 'begin immediate' : sql;
      for (const deadline = Date.now() + 10_000; ;) {
        try {
          sqlite.exec(statement);
          return;
        } catch (error) {
          if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    },
    async rows<T>(sql: string) { return sqlite.prepare(sql).all() as T[]; },
    async close() {
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
      sqlite.close();
    },
  };
}

/** A seed connection to Herald's PostgreSQL schema (the connection string selects it, as Herald's does). */
export async function openPostgresSeedConnection(url: string): Promise<SeedConnection & { close(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, application_name: 'herald-bench-seed' });
  await client.connect();
  const [{ pid }] = (await client.query('select pg_backend_pid() as pid')).rows as Array<{ pid: number }>;
  return {
    dialect: 'postgres',
    async run(sql) { await client.query(sql); },
    async cancel() {
      const other = new pg.Client({ connectionString: url, application_name: 'herald-bench-seed-cancel' });
      await other.connect();
      try {
        await other.query('select pg_cancel_backend($1)', [pid]);
      } finally {
        await other.end();
      }
    },
    async rows<T>(sql: string) { return (await client.query(sql)).rows as T[]; },
    async close() { await client.end(); },
  };
}
