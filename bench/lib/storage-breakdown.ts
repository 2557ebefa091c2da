import type { SeedConnection } from './clone-seed.js';

/**
 * Where the bytes of a Herald database go, per table and per index (issue 24 point 4, data size): SQLite's `dbstat`
 * (every page of the file, by the b-tree that owns it), PostgreSQL's relation sizes (heap, TOAST, each index) in the
 * connection's schema. Plus the average stored length of the big text columns, to see what a row holds.
 */
export interface StorageObject {
  /** The table, or the index. */
  name: string;
  /** The table it belongs to (itself for a table; `(free)` for SQLite's free pages). */
  table: string;
  kind: 'table' | 'index' | 'toast' | 'free';
  bytes: number;
}

export interface StorageBreakdown {
  objects: StorageObject[];
  totalBytes: number;
  /** Average length in characters of the text columns that hold documents, by `table.column`. */
  textColumns: Record<string, { rows: number; averageLength: number }>;
}

const TEXT_COLUMNS: Array<[table: string, column: string]> = [
  ['messages', 'document'],
  ['messages', 'list_text'],
  ['notifications', 'document'],
  ['notification_texts', 'text'],
  ['jobs', 'document'],
  ['execution_details', 'detail'],
  ['execution_details', 'raw'],
  ['triggers', 'request'],
];

export async function storageBreakdown(db: SeedConnection): Promise<StorageBreakdown> {
  const objects: StorageObject[] = [];
  if (db.dialect === 'sqlite') {
    const owners = new Map(
      (await db.rows<{ name: string; tbl_name: string; type: string }>(`select name, tbl_name, type from sqlite_master where type in ('table', 'index')`)).map(
        (row) => [row.name, row] as const,
      ),
    );
    const rows = await db.rows<{ name: string; bytes: number }>(`select name, sum(pgsize) as bytes from dbstat group by name`);
    for (const row of rows) {
      const owner = owners.get(row.name);
      objects.push({
        name: row.name,
        table: owner?.tbl_name ?? row.name,
        kind: owner?.type === 'index' ? 'index' : 'table',
        bytes: Number(row.bytes),
      });
    }
    const [free] = await db.rows<{ n: number }>(`select freelist_count as n from pragma_freelist_count`);
    const [pageSize] = await db.rows<{ n: number }>(`select page_size as n from pragma_page_size`);
    if (free && Number(free.n) > 0) objects.push({ name: '(free pages)', table: '(free)', kind: 'free', bytes: Number(free.n) * Number(pageSize!.n) });
  } else {
    objects.push(...(await postgresObjects(db)));
  }
  objects.sort((a, b) => b.bytes - a.bytes);
  const textColumns: StorageBreakdown['textColumns'] = {};
  const tables = new Set(objects.map((object) => object.table));
  for (const [table, column] of TEXT_COLUMNS) {
    if (!tables.has(table)) continue;
    const columns = db.dialect === 'sqlite'
      ? (await db.rows<{ name: string }>(`select name from pragma_table_info('${table}')`)).map((row) => row.name)
      : (await db.rows<{ name: string }>(`select column_name as name from information_schema.columns where table_schema = current_schema() and table_name = '${table}'`)).map((row) => row.name);
    if (!columns.includes(column)) continue;
    const [row] = await db.rows<{ n: number | string; average: number | string | null }>(
      `select count(${column}) as n, avg(length(${column})) as average from ${table}`,
    );
    textColumns[`${table}.${column}`] = { rows: Number(row!.n), averageLength: Math.round(Number(row!.average ?? 0)) };
  }
  return { objects, totalBytes: objects.reduce((sum, object) => sum + object.bytes, 0), textColumns };
}

/** A Markdown table of the breakdown in bytes per message, tables with their indexes, biggest first. */
export function breakdownTable(breakdown: StorageBreakdown, messages: number, minBytesPerMessage = 1): string {
  const perMessage = (bytes: number) => bytes / messages;
  const byTable = new Map<string, StorageObject[]>();
  for (const object of breakdown.objects) byTable.set(object.table, [...(byTable.get(object.table) ?? []), object]);
  const tables = [...byTable.entries()]
    .map(([table, members]) => ({ table, members, bytes: members.reduce((sum, member) => sum + member.bytes, 0) }))
    .sort((a, b) => b.bytes - a.bytes);
  const lines = ['| table / index | bytes per message | share |', '|---|---:|---:|'];
  for (const { table, members, bytes } of tables) {
    if (perMessage(bytes) < minBytesPerMessage) continue;
    lines.push(`| **${table}** (all) | **${Math.round(perMessage(bytes))}** | ${((100 * bytes) / breakdown.totalBytes).toFixed(1)} % |`);
    if (members.length === 1 && members[0]!.kind === 'table') continue;
    for (const member of members) {
      if (perMessage(member.bytes) < minBytesPerMessage) continue;
      lines.push(`| &nbsp;&nbsp;${member.kind === 'table' ? 'rows' : member.name} | ${Math.round(perMessage(member.bytes))} | |`);
    }
  }
  lines.push(`| **total** | **${Math.round(perMessage(breakdown.totalBytes))}** | |`);
  return lines.join('\n');
}

/** PostgreSQL: the size of each heap, TOAST and index in the connection's schema (cheap: no scan of the rows). */
export async function postgresObjects(db: SeedConnection): Promise<StorageObject[]> {
  const rows = await db.rows<{ table_name: string; name: string; kind: string; bytes: string }>(`
    select t.relname as table_name, t.relname as name, 'table' as kind, pg_relation_size(t.oid) as bytes
      from pg_class t join pg_namespace n on n.oid = t.relnamespace where n.nspname = current_schema() and t.relkind = 'r'
    union all
    select t.relname, t.relname || ' (toast)', 'toast', coalesce(pg_total_relation_size(t.reltoastrelid), 0)
      from pg_class t join pg_namespace n on n.oid = t.relnamespace where n.nspname = current_schema() and t.relkind = 'r' and t.reltoastrelid <> 0
    union all
    select t.relname, i.relname, 'index', pg_relation_size(i.oid)
      from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = current_schema()`);
  return rows.map((row) => ({ name: row.name, table: row.table_name, kind: row.kind as StorageObject['kind'], bytes: Number(row.bytes) }));
}
