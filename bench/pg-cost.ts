import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import pg from 'pg';
import { createTestSchema } from '../test/helpers/databases.js';
import { openPostgres } from '../src/store/postgres/connection.js';
import { migrateToLatest } from '../src/store/sql/migrate.js';
import { positiveInteger } from './lib/cli-options.js';

/**
 * `npm run bench:pg-cost -- --log <file>`: where PostgreSQL's CPU goes, per statement (issue 24). pg_stat_statements
 * needs a server restart to load, so instead this replays a statement log written by a Herald run with
 * `BENCH_SQL_LOG=<file> BENCH_SQL_LOG_VALUES=1` and the round-trip counter preloaded (every process's statements
 * with their values and connection) into a fresh schema migrated by Herald (the log's own migration statements are skipped), one connection per original connection,
 * in the logged order, named statements prepared as Herald prepares them. Around each statement it reads the serving
 * backend's CPU time from /proc/<pid>/schedstat (nanoseconds; the server must run on this machine), and prints the
 * CPU per statement shape, heaviest first. Sequential: no lock waits or group commits of the real run, so compare
 * replays with each other, and the total with what `bench:drain` measures.
 *
 * `--explain <n>`: the n-th execution of each shape runs as EXPLAIN (ANALYZE, BUFFERS) instead (it still executes).
 * `--sql <file>`: SQL run in the schema before the first replayed statement (an index to try, a trigger dropped), and
 * with `--sql-every <n>` again after every n statements (an ANALYZE, as autovacuum would run it), timed apart.
 * `--replace '<from>=><to>'` (repeatable): replays statement texts with this substring replaced (a rewrite to try).
 */
interface Options { log: string; top: number; explain?: number; pid?: number; sql?: string; sqlEvery?: number; replace: string[] }

interface LogLine { pid: number; client: number; named: boolean; text: string; values: unknown[] }

interface Shape { label: string; count: number; ns: number; errors: number; firstError?: string; plan?: string; pids: Set<number> }

const SKIPPED = /^\s*(create|drop)\s+schema\b/i;

function label(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (/^with\b/i.test(flat)) {
    const tables = [...flat.matchAll(/\b(insert into|update|delete from)\s+"?([a-z_]+)"?/gi)].map((match) => `${match[1]!.split(' ')[0]!.toLowerCase()} ${match[2]}`);
    return `with: ${tables.join(', ')}`;
  }
  return flat.length > 150 ? `${flat.slice(0, 147)}...` : flat;
}

function backendCpuNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
}

async function main(): Promise<void> {
  const options = new Command()
    .requiredOption('--log <file>', 'statement log (BENCH_SQL_LOG with BENCH_SQL_LOG_VALUES=1)')
    .option('--top <n>', 'shapes to print', positiveInteger, 25)
    .option('--explain <n>', 'run the n-th execution of each shape under EXPLAIN (ANALYZE, BUFFERS)', positiveInteger)
    .option('--pid <pid>', 'print only the statements of this Herald process', positiveInteger)
    .option('--sql <file>', 'SQL to run before the first replayed statement')
    .option('--sql-every <n>', 'run --sql again after every n statements', positiveInteger)
    .option('--replace <from=>to>', 'replace a substring of statement texts (repeatable)', (value: string, all: string[]) => [...all, value], [])
    .parse(['node', 'bench:pg-cost', ...process.argv.slice(2)])
    .opts<Options>();
  const schema = await createTestSchema();
  const connections = new Map<string, { client: pg.Client; backend: number; prepared: Map<string, string> }>();
  const shapes = new Map<string, Shape>();
  let preparedCount = 0;
    const connection = async (key: string) => {
    let found = connections.get(key);
    if (!found) {
      const client = new pg.Client({ connectionString: schema.url, statement_timeout: 5000, lock_timeout: 1000 } as pg.ClientConfig);
      client.on('error', () => undefined);
      await client.connect();
      const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      found = { client, backend, prepared: new Map() };
      connections.set(key, found);
    }
    return found;
  };
  try {
    const log = readFileSync(options.log, 'utf8').split('\n').filter((raw) => raw.startsWith('{')).map((raw) => JSON.parse(raw) as LogLine);
    // The `herald migrate` process: the one that touches Kysely's migration table.
    const migrators = new Set(log.filter((line) => /kysely_migration/i.test(line.text)).map((line) => line.pid));
    const db = openPostgres(schema.url, 1);
    await migrateToLatest(db, 'postgres');
    await db.destroy();
    const replacements = options.replace.map((pair) => pair.split('=>') as [string, string]);
    let replayed = 0;
    let extraNs = 0;
    let extraRuns = 0;
    const runExtra = async () => {
      if (!options.sql) return;
      const { client, backend } = await connection('extra');
      const start = backendCpuNs(backend);
      await client.query(readFileSync(options.sql, 'utf8'));
      extraNs += backendCpuNs(backend) - start;
      extraRuns += 1;
    };
    await runExtra();
    for (const original of log) {
      if (SKIPPED.test(original.text) || migrators.has(original.pid)) continue;
      if (options.sqlEvery && ++replayed % options.sqlEvery === 0) await runExtra();
      let text = original.text;
      for (const [from, to] of replacements) text = text.split(from).join(to);
      const line = { ...original, text };
      const { client, backend, prepared } = await connection(`${line.pid}/${line.client}`);
      const key = line.text;
      let shape = shapes.get(key);
      if (!shape) shapes.set(key, (shape = { label: label(line.text), count: 0, ns: 0, errors: 0, pids: new Set() }));
      shape.pids.add(line.pid);
      const explain = options.explain !== undefined && shape.count + 1 === options.explain && !/^\s*(begin|commit|rollback)\b/i.test(line.text);
      let query: pg.QueryConfig | string;
      if (explain) query = { text: `explain (analyze, buffers) ${line.text}`, values: line.values };
      else if (line.named && line.values.length > 0) {
        let name = prepared.get(line.text);
        if (!name) prepared.set(line.text, (name = `replay_${++preparedCount}`));
        query = { name, text: line.text, values: line.values };
      } else query = line.values.length > 0 ? { text: line.text, values: line.values } : line.text;
      const start = backendCpuNs(backend);
      try {
        const result = await client.query(query as pg.QueryConfig);
        if (explain) shape.plan = (result.rows as Array<Record<string, string>>).map((row) => row['QUERY PLAN']).join('\n');
      } catch (error) {
        shape.errors += 1;
        shape.firstError ??= (error as Error).message;
      }
      shape.ns += backendCpuNs(backend) - start;
      shape.count += 1;
    }
    const shown = [...shapes.values()].filter((shape) => options.pid === undefined || shape.pids.has(options.pid));
    const total = shown.reduce((sum, shape) => sum + shape.ns, 0);
    if (options.sql) console.log(`--sql: ${extraRuns} runs, ${(extraNs / 1e6).toFixed(1)} ms of backend CPU`);
    console.log(`backend CPU of the replayed statements: ${(total / 1e6).toFixed(1)} ms over ${shown.reduce((sum, shape) => sum + shape.count, 0)} statements`);
    console.log('| statement | executions | CPU ms | µs each | share | errors |\n|---|---:|---:|---:|---:|---:|');
    for (const shape of shown.sort((a, b) => b.ns - a.ns).slice(0, options.top)) {
      console.log(`| ${shape.label.replace(/\|/g, '\\|')} | ${shape.count} | ${(shape.ns / 1e6).toFixed(1)} | ${(shape.ns / 1e3 / shape.count).toFixed(1)} | ${((100 * shape.ns) / total).toFixed(1)} % | ${shape.errors} |`);
    }
    // How PostgreSQL ran the prepared ones: a custom plan is planned again on every execution.
    const plans = new Map<string, { generic: number; custom: number }>();
    for (const { client } of connections.values()) {
      const { rows } = await client.query<{ statement: string; generic_plans: string; custom_plans: string }>('select statement, generic_plans, custom_plans from pg_prepared_statements');
      for (const row of rows) {
        const found = plans.get(row.statement) ?? { generic: 0, custom: 0 };
        plans.set(row.statement, { generic: found.generic + Number(row.generic_plans), custom: found.custom + Number(row.custom_plans) });
      }
    }
    for (const [text, counts] of plans) {
      if (counts.custom > counts.generic) console.log(`custom plans ${counts.custom}, generic ${counts.generic}: ${label(text).slice(0, 120)}`);
    }
    for (const shape of shown.filter((candidate) => candidate.firstError)) console.log(`error in ${shape.label.slice(0, 80)}: ${shape.firstError}`);
    for (const shape of shown.filter((candidate) => candidate.plan).sort((a, b) => b.ns - a.ns).slice(0, options.top)) {
      console.log(`\n### ${shape.label}\n${shape.plan}`);
    }
  } finally {
    await Promise.allSettled([...connections.values()].map(({ client }) => client.end()));
    await schema.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
