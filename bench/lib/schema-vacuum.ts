/**
 * `vacuum analyze` of the tables of the connection's own schema only. A bare `vacuum analyze` gives statistics to every
 * schema of the database, including the schemas of tests running at the same time on the shared `test` database,
 * whose plan tests expect tables without statistics (autovacuum is off on the project machines).
 */
export async function vacuumAnalyzeOwnSchema(connection: {
  run(sql: string): Promise<void>;
  rows<T = Record<string, unknown>>(sql: string): Promise<T[]>;
}): Promise<void> {
  const tables = await connection.rows<{ name: string }>(
    `select format('%I.%I', schemaname, tablename) as name from pg_tables where schemaname = current_schema() order by tablename`,
  );
  if (tables.length > 0) await connection.run(`vacuum analyze ${tables.map((table) => table.name).join(', ')}`);
}
