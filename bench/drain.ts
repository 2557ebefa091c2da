import { loadavg } from 'node:os';
import { Command } from 'commander';
import { startScaleoutProcesses, startWorker, SCALEOUT_SECRET } from '../test/helpers/scaleout-processes.js';
import { buildServer } from '../scripts/build-server.mjs';
import { api, createInAppWorkflow, inAppMessageCount } from './lib/bench-client.js';
import { positiveInteger } from './lib/cli-options.js';
import { cpuPerOperation, findGroups, readCpu } from './lib/process-cpu.js';

/**
 * `npm run bench:drain -- --triggers 3000`: the scale-out worker's in-app deliveries on their own. `herald api` accepts
 * the triggers (one-step in-app workflow, a new subscriber each) with no worker running; then one `herald worker`
 * starts and drains them. Prints deliveries/s over the drain and the CPU per delivery of the worker, its PostgreSQL
 * backends and Redis, measured from /proc (CPU time, so it holds better than rates on a shared machine); with
 * `--profile <dir>`, a CPU profile of the worker.
 */
interface Options { triggers: number; concurrency: number; profile?: string }

const log = (message: string) => console.log(`[bench:drain ${new Date().toISOString().slice(11, 19)}] ${message}`);

async function main(): Promise<void> {
  const options = new Command()
    .option('--triggers <n>', 'triggers to accept, then deliver', positiveInteger, 3000)
    .option('--concurrency <n>', 'triggers posted at once', positiveInteger, 50)
    .option('--profile <dir>', 'write a --cpu-prof profile of the worker into this directory')
    .parse(['node', 'bench:drain', ...process.argv.slice(2)])
    .opts<Options>();
  if (await buildServer({ ifStale: true, quiet: true })) log('server built into dist/server');
  log(`load average ${loadavg()[0]!.toFixed(2)}`);
  const processes = await startScaleoutProcesses({ apis: 1, workers: 0, env: { LOG_LEVEL: 'warn' } });
  const url = processes.apis[0]!.url;
  const call = (method: string, path: string, body?: unknown) => api(url, SCALEOUT_SECRET, method, path, body);
  try {
    await createInAppWorkflow(url, SCALEOUT_SECRET, 'drain', { controlValues: { body: 'Hello {{subscriber.subscriberId}}' } });
    let next = 0;
    const prefix = `drain-${Date.now().toString(36)}`;
    await Promise.all(Array.from({ length: options.concurrency }, async () => {
      while (next < options.triggers) {
        const n = next++;
        await call('POST', '/v1/events/trigger', { name: 'drain', to: `${prefix}-${n}`, payload: { n } });
      }
    }));
    log(`${options.triggers} triggers accepted; starting the worker`);
    const worker = await startWorker(processes.env, options.profile ? ['--cpu-prof', `--cpu-prof-dir=${options.profile}`] : []);
    const redisPort = Number(new URL(processes.env.REDIS_URL!).port);
    const groups = () => findGroups({ worker: worker.child.pid! }, 5432, redisPort);
    const startGroups = groups();
    const before = readCpu(startGroups);
    const started = Date.now();
    let delivered = 0;
    while (delivered < options.triggers) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      delivered = await inAppMessageCount(url, SCALEOUT_SECRET);
      if (Date.now() - started > 600_000) throw new Error(`only ${delivered} delivered after 600 s`);
    }
    const elapsed = Date.now() - started;
    const endGroups = groups();
    const merged = Object.fromEntries(Object.keys(startGroups).map((name) => [name, [...new Set([...(startGroups[name] ?? []), ...(endGroups[name] ?? [])])]]));
    const cpu = cpuPerOperation(before, readCpu(merged), delivered);
    log(`deliveries: ${delivered} in ${elapsed} ms (${Math.round((delivered * 1000) / elapsed)}/s), load average ${loadavg()[0]!.toFixed(2)}`);
    log(`CPU ms per delivery: ${Object.entries(cpu).map(([name, value]) => `${name} ${value.msPerOperation}`).join(', ')}`);
    await worker.stop();
  } finally {
    await processes.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
