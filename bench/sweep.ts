import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { createContainer, type Container } from '../src/container.js';
import { newId } from '../src/domain/ids.js';
import { JOB_NAMES } from '../src/queue/jobs.js';
import type { TriggerRecord } from '../src/store/ports.js';
import { enqueueTrigger, triggerJob } from '../src/usecases/events/accept-trigger.js';
import { recoverAcceptedTriggers } from '../src/usecases/events/recover-triggers.js';
import { bootstrapTenancy } from '../src/usecases/tenancy/bootstrap-tenancy.js';
import { median } from './lib/rounds.js';
import { benchMode, positiveInteger } from './lib/cli-options.js';

/**
 * `npm run bench:sweep`: the cost of one pass of the accepted-trigger sweep over a backlog, that is N triggers still
 * `accepted` whose queue jobs are all there (the state of a backlog during a burst, which every periodic pass walks
 * again: each re-enqueue is a no-op). Measured two ways in the same run, alternating: the sweep as it runs
 * (`recoverAcceptedTriggers`, bulk `enqueueMany`) and, as the baseline, one `enqueue` per trigger (the sweep before
 * session 6). Reports wall time and this process's CPU per trigger; no worker runs.
 *
 *   node --import tsx bench/sweep.ts [--mode embedded|scaleout] [--triggers 20000] [--rounds 3]
 */
const here = dirname(fileURLToPath(import.meta.url));
const POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379/0';

interface Options {
  mode: 'embedded' | 'scaleout';
  triggers: number;
  rounds: number;
}

function parseOptions(argv: string[]): Options {
  return new Command()
    .name('bench:sweep')
    .option('--mode <mode>', 'embedded (SQLite queue) or scaleout (PostgreSQL + BullMQ)', benchMode, 'embedded')
    .option('--triggers <n>', 'accepted triggers in the backlog', positiveInteger, 20_000)
    .option('--rounds <n>', 'passes of each kind, alternating', positiveInteger, 3)
    .parse(argv)
    .opts<Options>();
}

interface Pass {
  wallMs: number;
  cpuUsPerTrigger: number;
}

async function timed(triggers: number, work: () => Promise<void>): Promise<Pass> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  await work();
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - started, cpuUsPerTrigger: (used.user + used.system) / triggers };
}

async function seedBacklog(container: Container, count: number): Promise<TriggerRecord[]> {
  const { deps } = container;
  const environment = (await deps.store.tenancy.findEnvironmentByName('development'))!;
  const createdAt = new Date(Date.now() - 3_600_000).toISOString();
  const records: TriggerRecord[] = Array.from({ length: count }, (_, index) => ({
    _id: newId(),
    environmentId: environment._id,
    organizationId: environment._organizationId,
    transactionId: `sweep-${index}`,
    workflowId: 'bench',
    request: { name: 'bench', to: `s-${index}`, payload: {} },
    state: 'accepted',
    createdAt,
    updatedAt: createdAt,
  }));
  for (let start = 0; start < records.length; start += 500) {
    await Promise.all(records.slice(start, start + 500).map((record) => deps.store.triggers.create(record)));
  }
  await deps.queue.enqueueMany(JOB_NAMES.processTrigger, records.map(triggerJob));
  return records;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv);
  const suffix = randomBytes(5).toString('hex');
  const schema = options.mode === 'scaleout' ? `herald_bench_sweep_${suffix}` : undefined;
  const admin = schema ? new pg.Client({ connectionString: POSTGRES_URL }) : undefined;
  if (admin && schema) {
    await admin.connect();
    await admin.query(`create schema ${schema}`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-sweep-'));
  const config = loadConfig({
    HERALD_DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    ...(schema ? { DATABASE_URL: `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, REDIS_URL } : {}),
  });
  const container = await createContainer(config, { redisPrefix: `herald_bench_sweep_${suffix}` });
  try {
    await bootstrapTenancy(container.deps);
    const seeded = Date.now();
    const backlog = await seedBacklog(container, options.triggers);
    process.stderr.write(`[bench:sweep] ${options.mode}: ${backlog.length} accepted triggers with queue jobs seeded in ${Date.now() - seeded} ms\n`);
    const bulk: Pass[] = [];
    const perJob: Pass[] = [];
    for (let round = 0; round < options.rounds; round++) {
      perJob.push(await timed(backlog.length, async () => {
        const stale = await container.deps.store.triggers.listStale(new Date().toISOString(), 100_000);
        for (const trigger of stale) await enqueueTrigger(container.deps, trigger);
      }));
      bulk.push(await timed(backlog.length, async () => {
        const recovered = await recoverAcceptedTriggers(container.deps, 0);
        if (recovered !== backlog.length) throw new Error(`the sweep saw ${recovered} triggers, expected ${backlog.length}`);
      }));
    }
    const summary = (passes: Pass[]) => ({
      wallMs: Math.round(median(passes.map((pass) => pass.wallMs))),
      cpuUsPerTrigger: Number(median(passes.map((pass) => pass.cpuUsPerTrigger)).toFixed(1)),
      rounds: passes.map((pass) => ({ wallMs: Math.round(pass.wallMs), cpuUsPerTrigger: Number(pass.cpuUsPerTrigger.toFixed(1)) })),
    });
    const results = {
      date: new Date().toISOString(),
      mode: options.mode,
      triggers: backlog.length,
      sweep: summary(bulk),
      oneEnqueuePerTrigger: summary(perJob),
    };
    console.table({
      'sweep (enqueueMany)': { 'wall ms': results.sweep.wallMs, 'CPU µs per trigger': results.sweep.cpuUsPerTrigger },
      'baseline: one enqueue per trigger': { 'wall ms': results.oneEnqueuePerTrigger.wallMs, 'CPU µs per trigger': results.oneEnqueuePerTrigger.cpuUsPerTrigger },
    });
    const output = join(here, 'results', `sweep-${options.mode}.json`);
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, JSON.stringify(results, null, 2) + '\n');
    console.log(`written to ${output}`);
  } finally {
    await container.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (admin && schema) {
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
      await removeRedisKeys(`herald_bench_sweep_${suffix}`);
    }
  }
}

/** The backlog's BullMQ keys, so repeated runs do not pile jobs up in the shared Redis. */
async function removeRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 })) {
      if ((keys as string[]).length > 0) await redis.unlink(...(keys as string[]));
    }
  } finally {
    redis.disconnect();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
