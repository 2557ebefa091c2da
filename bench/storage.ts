import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { startHerald } from '../test/helpers/herald-process.js';
import { startScaleoutProcesses, SCALEOUT_SECRET } from '../test/helpers/scaleout-processes.js';
import { buildServer } from '../scripts/build-server.mjs';
import { positiveInteger } from './lib/cli-options.js';
import { api, createInAppWorkflow, waitForMessages } from './lib/bench-client.js';
import { growClones, openPostgresSeedConnection, openSqliteSeedConnection, prepareCloneSeed, seededMessages, type SeedConnection } from './lib/clone-seed.js';
import { breakdownTable, storageBreakdown, type StorageBreakdown } from './lib/storage-breakdown.js';
import { vacuumAnalyzeOwnSchema } from './lib/schema-vacuum.js';

/**
 * `npm run bench:storage` (issue 24 point 4): the bytes Herald stores per delivered in-app message, per table and per
 * index, embedded (SQLite `dbstat`) and scaled out (PostgreSQL relation sizes). Herald delivers `--messages` real
 * triggers of bench:data-size's workflow and payload (one in-app message each, to as many subscribers), then, with
 * `--seed`, bench/lib/clone-seed.ts copies them up to that many messages as bench:data-size does, and the breakdown
 * is taken again. Embedded, Herald is stopped and the WAL checkpointed before each breakdown.
 *
 * PostgreSQL's indexes are built after the copies (as bench:data-size does), or with `--grown-indexes` grown through them.
 *
 *   npm run bench:storage -- [--modes embedded,scaleout] [--messages 2000] [--seed 100k] [--grown-indexes]
 */
const here = dirname(fileURLToPath(import.meta.url));
const SECRET = 'sk_bench_storage_0123456789abcdef0123456789abcd';
const WORKFLOW = 'bench-data-size';
type Mode = 'embedded' | 'scaleout';

function size(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(value.trim());
  if (!match) throw new InvalidArgumentError(`${value}: a count like 100k, 1m or 250000`);
  const unit = match[2]!.toLowerCase();
  return Math.round(Number(match[1]) * (unit === 'k' ? 1e3 : unit === 'm' ? 1e6 : 1));
}

const options = new Command()
  .name('bench:storage')
  .option('--modes <list>', 'embedded,scaleout', (value) => value.split(',') as Mode[], ['embedded', 'scaleout'] as Mode[])
  .option('--messages <n>', 'real triggers delivered (one in-app message each)', positiveInteger, 2000)
  .option('--seed <n>', 'then clone them up to this many messages (0: no seed)', size, 0)
  .option('--grown-indexes', 'PostgreSQL: seed with the indexes in place (grown through the copies) instead of building them after', false)
  .option('--from-source', 'run Herald from the sources through tsx instead of the compiled build', false)
  .option('--output <file>', 'results file (default bench/results/storage.json)')
  .parse(['node', 'bench:storage', ...process.argv.slice(2)])
  .opts<{ modes: Mode[]; messages: number; seed: number; grownIndexes: boolean; fromSource: boolean; output?: string }>();

const log = (message: string) => console.log(`[bench:storage ${new Date().toISOString().slice(11, 19)}] ${message}`);

interface Measured {
  mode: Mode;
  messages: number;
  seeded: boolean;
  bytesPerMessage: number;
  breakdown: StorageBreakdown;
}

async function deliver(url: string, key: string): Promise<void> {
  await createInAppWorkflow(url, key, WORKFLOW);
  const subscribers = Array.from({ length: options.messages }, (_, i) => `size-subscriber-${i}`);
  for (let i = 0; i < subscribers.length; i += 100) {
    await api(url, key, 'POST', '/v1/events/trigger', { name: WORKFLOW, to: subscribers.slice(i, i + 100), payload: { n: i, text: 'hi' } });
  }
  await waitForMessages(url, key, subscribers.length, 600_000);
}

async function measure(mode: Mode, seed: SeedConnection, results: Measured[]): Promise<void> {
  const [environment] = await seed.rows<{ environment_id: string }>(`select environment_id from messages limit 1`);
  const count = async () => Number((await seed.rows<{ n: number | string }>(`select count(*) as n from messages`))[0]!.n);
  const take = async (seeded: boolean) => {
    if (seed.dialect === 'postgres') await vacuumAnalyzeOwnSchema(seed);
    const messages = await count();
    const breakdown = await storageBreakdown(seed);
    results.push({ mode, messages, seeded, bytesPerMessage: breakdown.totalBytes / messages, breakdown });
    log(`${mode}, ${messages} messages (${seeded ? 'seeded' : 'delivered'}): ${Math.round(breakdown.totalBytes / messages)} bytes per message`);
    console.log(breakdownTable(breakdown, messages));
    console.log(Object.entries(breakdown.textColumns).map(([column, { rows, averageLength }]) => `${column}: ${rows} rows, ${averageLength} characters on average`).join('\n'));
  };
  await take(false);
  if (options.seed > 0) {
    let state = await prepareCloneSeed(seed, environment!.environment_id);
    state = await growClones(seed, state, options.seed, { rebuildIndexes: !options.grownIndexes });
    log(`${mode}: seeded ${seededMessages(state)} messages`);
    for (const table of ['bench_seed_notifications', 'bench_seed_jobs', 'bench_seed_execution_details', 'bench_seed_messages', 'bench_seed_counters']) {
      await seed.run(`drop table if exists ${table}`);
    }
    if (seed.dialect === 'sqlite') await seed.run('vacuum');
    await take(true);
  }
}

async function runMode(mode: Mode, results: Measured[]): Promise<void> {
  const common = { HERALD_FROM_SOURCE: options.fromSource ? '1' : '', LOG_LEVEL: 'warn' };
  if (mode === 'embedded') {
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-storage-'));
    try {
      const herald = await startHerald({ ...common, HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: SECRET });
      try {
        await deliver(herald.url, SECRET);
      } finally {
        await herald.stop();
      }
      const seed = await openSqliteSeedConnection(join(dataDir, 'herald.sqlite'));
      try {
        await measure(mode, seed, results);
      } finally {
        await seed.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    return;
  }
  const processes = await startScaleoutProcesses({ apis: 1, workers: 1, env: { ...common, HERALD_QUEUE_POLL_MS: '200' } });
  try {
    await deliver(processes.apis[0]!.url, SCALEOUT_SECRET);
    const seed = await openPostgresSeedConnection(processes.env.DATABASE_URL!);
    try {
      await measure(mode, seed, results);
    } finally {
      await seed.close();
    }
  } finally {
    await processes.close();
  }
}

if (!options.fromSource && (await buildServer({ ifStale: true, quiet: true }))) log('server built into dist/server');
const results: Measured[] = [];
const output = options.output ?? join(here, 'results', 'storage.json');
try {
  for (const mode of options.modes) await runMode(mode, results);
} finally {
  mkdirSync(dirname(output), { recursive: true });
  writeFileSync(output, JSON.stringify({ at: new Date().toISOString(), options, results }, null, 2) + '\n');
  log(`written to ${output}`);
}
