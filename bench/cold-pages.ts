import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Command } from 'commander';
import { startHerald } from '../test/helpers/herald-process.js';
import { positiveInteger } from './lib/cli-options.js';
import { load, type LoadResult } from './lib/bench-client.js';

/**
 * Cold deep pages beside other requests (issue 24, session 24: reader threads). Over a data set kept by
 * `npm run bench:data-size -- --modes embedded --sizes 1m --keep-data <dir>`, for each HERALD_READER_THREADS value:
 * start `herald start` on it, drop the page cache (`sync; echo 3 > /proc/sys/vm/drop_caches`, root), then run a load
 * of deep message pages (each subscriber's middle page, in turn: cold disk reads at first), then of deep events pages
 * (page 1000: slow however warm, ~27 ms each at 1M), each after dropping the cache, and, beside each, a probe that asks
 * `GET /health` and page 0 of one subscriber (hot after its first read) one after the other every `--probe-ms`:
 * how long other requests wait while cold pages are read.
 *
 *   node --import tsx bench/cold-pages.ts --data <dir> [--threads 0,1,2] [--duration 20] [--connections 8]
 */
const SECRET = 'sk_bench_data_size_0123456789abcdef0123456789ab';

interface Options {
  data: string;
  threads: number[];
  duration: number;
  connections: number;
  subscribers: number;
  page: number;
  probeMs: number;
  notificationPage: number;
  output?: string;
}

const options = new Command()
  .requiredOption('--data <dir>', 'the kept embedded data directory (bench:data-size --keep-data)')
  .option('--threads <list>', 'HERALD_READER_THREADS values, in order', (value) => value.split(',').map(Number), [0, 1, 2])
  .option('--duration <seconds>', 'seconds of deep-page load per value', positiveInteger, 20)
  .option('--connections <n>', 'connections of the deep-page load', positiveInteger, 8)
  .option('--subscribers <n>', 'subscribers of the data set (size-subscriber-<i>)', positiveInteger, 1000)
  .option('--page <n>', 'the deep page (limit 10)', positiveInteger, 50)
  .option('--probe-ms <n>', 'ms between probes', positiveInteger, 20)
  .option('--notification-page <n>', 'the deep events page of the second load (limit 10; slow however warm: a second per 10 pages is read)', positiveInteger, 1000)
  .option('--output <file>', 'results file')
  .parse(['node', 'cold-pages', ...process.argv.slice(2)])
  .opts<Options>();

const log = (message: string) => console.log(`[cold-pages ${new Date().toISOString().slice(11, 19)}] ${message}`);

function percentiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN);
  const round = (value: number) => Math.round(value * 10) / 10;
  return { n: sorted.length, p50: round(at(50)), p99: round(at(99)), max: round(sorted.at(-1) ?? NaN) };
}

async function probe(url: string, path: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url + path, { headers: { authorization: `ApiKey ${SECRET}` } });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  return performance.now() - started;
}

type Probe = ReturnType<typeof percentiles>;
const results: Array<{ threads: number; list: string; deep: LoadResult; health: Probe; pageZero: Probe; loadAverage: number }> = [];
for (const threads of options.threads) {
  const herald = await startHerald({ HERALD_DATA_DIR: options.data, HERALD_BOOTSTRAP_SECRET_KEY: SECRET, HERALD_READER_THREADS: String(threads), LOG_LEVEL: 'warn' });
  try {
    const hot = `/v1/messages?subscriberId=size-subscriber-0&limit=10`;
    const lists = {
      // Subscribers in a scattered order, so consecutive pages are far apart in the file.
      messages: Array.from({ length: options.subscribers }, (_, i) => `/v1/messages?subscriberId=size-subscriber-${(i * 7919) % options.subscribers}&limit=10&page=${options.page}`),
      notifications: Array.from({ length: 10 }, (_, i) => `/v1/notifications?limit=10&page=${options.notificationPage + i}`),
    };
    for (const [list, paths] of Object.entries(lists)) {
      await probe(herald.url, hot);
      execSync('sync; echo 3 > /proc/sys/vm/drop_caches', { shell: '/bin/sh' });
      await probe(herald.url, hot);
      await probe(herald.url, '/health');
      const health: number[] = [];
      const pageZero: number[] = [];
      let running = true;
      const probing = (async () => {
        while (running) {
          health.push(await probe(herald.url, '/health'));
          pageZero.push(await probe(herald.url, hot));
          await new Promise((resolve) => setTimeout(resolve, options.probeMs));
        }
      })();
      const deep = await load({ url: herald.url, connections: options.connections, durationSeconds: options.duration, headers: { authorization: `ApiKey ${SECRET}` }, kind: 'rotate', paths });
      running = false;
      await probing;
      const result = { threads, list, deep, health: percentiles(health), pageZero: percentiles(pageZero), loadAverage: Math.round(loadavg()[0]! * 100) / 100 };
      results.push(result);
      const ms = (value: number) => Math.round(value * 10) / 10;
      log(
        `threads ${threads}, ${list} deep: ${deep.requestsPerSecond.toFixed(1)} req/s p50/p99 ${ms(deep.latencyMs.p50)}/${ms(deep.latencyMs.p99)} ms (${deep.notOk} not ok); ` +
          `/health p50/p99/max ${result.health.p50}/${result.health.p99}/${result.health.max} ms; page 0 p50/p99/max ${result.pageZero.p50}/${result.pageZero.p99}/${result.pageZero.max} ms (${result.health.n} probes); load ${result.loadAverage}`,
      );
    }
  } finally {
    await herald.stop();
  }
}
if (options.output) writeFileSync(options.output, JSON.stringify({ options, results }, null, 1) + '\n');
