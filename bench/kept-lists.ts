import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHerald } from '../test/helpers/herald-process.js';
import { BENCH_SECRET, load } from './lib/bench-client.js';

/**
 * `node --import tsx bench/kept-lists.ts <tree> <keptDataDir> <events|messages> [seconds] [--profile <dir>]`:
 * bench:http's list phase on a kept data set (bench/kept-lists-seed.ts), served by the compiled build of <tree> (its
 * `npm run build`) on a fresh copy of the data directory, LOG_LEVEL=info as `npm start`. A 3-second warm-up load, then
 * the timed load (50 connections, the pages in turn as bench:http asks for them); prints Herald's CPU per request
 * (/proc, user + system) and req/s. No seeding in the run, so A and B read the same rows.
 * `--perf <file>`: Herald runs with `--perf-basic-prof` and `perf record -e cpu-clock -g` samples its CPU (not wall
 * time, unlike V8's profiler) during the timed load into <file> (`perf report -i <file>`); its CPU per request then
 * carries perf's own cost, so compare trees without it.
 */
const args = process.argv.slice(2);
const profileAt = args.indexOf('--profile');
const profileDir = profileAt >= 0 ? args.splice(profileAt, 2)[1] : undefined;
const perfAt = args.indexOf('--perf');
const perfFile = perfAt >= 0 ? args.splice(perfAt, 2)[1] : undefined;
const [tree, kept, kind = 'events', secondsArg] = args;
const seconds = Number(secondsArg ?? 8);
const dataDir = mkdtempSync(join(tmpdir(), 'herald-kept-'));
cpSync(kept!, dataDir, { recursive: true });
const bin = join(resolve(tree!), 'bin', 'herald.js');

function cpuMs(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

const herald = await startHerald(
  { HERALD_DATA_DIR: dataDir, HERALD_BOOTSTRAP_SECRET_KEY: BENCH_SECRET, LOG_LEVEL: 'info' },
  profileDir ? [`--cpu-prof-dir=${profileDir}`, bin, 'start'] : perfFile ? [bin, 'start'] : ['start'],
  { bin: profileDir ? '--cpu-prof' : perfFile ? '--perf-basic-prof' : bin },
);
try {
  const paths =
    kind === 'events'
      ? Array.from({ length: 2000 }, (_, page) => `/v1/notifications?limit=10&page=${page}`)
      : Array.from({ length: 300 }, (_, i) => `list-kept-${i}`).flatMap((id) => [0, 1].map((page) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`));
  const headers = { authorization: `ApiKey ${BENCH_SECRET}` };
  await load({ kind: 'rotate', url: herald.url, paths, connections: 50, durationSeconds: 3, headers });
  const pid = herald.child.pid!;
  const before = cpuMs(pid);
  const load1 = loadavg()[0]!;
  const perf = perfFile
    ? spawn('perf', ['record', '-e', 'cpu-clock', '-F', '2000', '-g', '-p', String(pid), '-o', perfFile, '--', 'sleep', String(seconds)], { stdio: 'ignore' })
    : undefined;
  const result = await load({ kind: 'rotate', url: herald.url, paths, connections: 50, durationSeconds: seconds, headers });
  const after = cpuMs(pid);
  if (perf && perf.exitCode === null) await new Promise((resolve) => perf.once('exit', resolve));
  const cpu = after.user - before.user + after.system - before.system;
  console.log(JSON.stringify({
    tree, kind, at: new Date().toISOString().slice(11, 19), load: Math.round(load1 * 10) / 10,
    ok: result.ok, notOk: result.notOk, perSecond: Math.round(result.requestsPerSecond), p99: result.latencyMs.p99,
    cpuUsPerRequest: Math.round((cpu / result.ok) * 1000), userUs: Math.round(((after.user - before.user) / result.ok) * 1000),
    systemUs: Math.round(((after.system - before.system) / result.ok) * 1000), cpuShare: Math.round((cpu / result.elapsedMs) * 100) / 100,
  }));
} finally {
  await herald.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
