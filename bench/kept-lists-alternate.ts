import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHerald, type HeraldProcess } from '../test/helpers/herald-process.js';
import { BENCH_SECRET, load } from './lib/bench-client.js';

/**
 * `node --import tsx bench/kept-lists-alternate.ts <treeA> <treeB> <keptDataDir> <events|messages> [rounds] [seconds]`:
 * bench/kept-lists.ts's list load against two builds at once, each on its own copy of the kept data set, alternated
 * A B B A … in short loads (default 8 rounds of 4 s after a 3 s warm-up each), so both meet the same machine: on a
 * shared 2-core machine the load of other processes drifts within a minute, and a comparison of runs minutes apart
 * measures the drift. Prints each load's Herald CPU per request (/proc, user + system) and the medians per tree.
 */
const [treeA, treeB, kept, kind = 'events', roundsArg, secondsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 8);
const seconds = Number(secondsArg ?? 4);

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const paths =
  kind === 'events'
    ? Array.from({ length: 2000 }, (_, page) => `/v1/notifications?limit=10&page=${page}`)
    : Array.from({ length: 300 }, (_, i) => `list-kept-${i}`).flatMap((id) => [0, 1].map((page) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`));
const headers = { authorization: `ApiKey ${BENCH_SECRET}` };
const dirs: string[] = [];
const servers: Record<'A' | 'B', HeraldProcess> = {} as never;
try {
  for (const [name, tree] of [['A', treeA], ['B', treeB]] as const) {
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-kept-'));
    dirs.push(dataDir);
    cpSync(kept!, dataDir, { recursive: true });
    servers[name] = await startHerald({ HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: BENCH_SECRET, LOG_LEVEL: 'info' }, ['start'], { bin: join(resolve(tree!), 'bin', 'herald.js') });
  }
  for (const name of ['A', 'B'] as const) await load({ kind: 'rotate', url: servers[name].url, paths, connections: 50, durationSeconds: 3, headers });
  const results: Record<'A' | 'B', number[]> = { A: [], B: [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const pid = servers[name].child.pid!;
      const before = cpuMs(pid);
      const result = await load({ kind: 'rotate', url: servers[name].url, paths, connections: 50, durationSeconds: seconds, headers });
      const perRequest = Math.round(((cpuMs(pid) - before) / result.ok) * 1000);
      results[name].push(perRequest);
      console.log(JSON.stringify({ round, tree: name, load: Math.round(loadavg()[0]! * 10) / 10, perSecond: Math.round(result.requestsPerSecond), notOk: result.notOk, cpuUsPerRequest: perRequest }));
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(JSON.stringify({ kind, A: results.A, B: results.B, medianA: median(results.A), medianB: median(results.B) }));
} finally {
  for (const server of Object.values(servers)) await server.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
