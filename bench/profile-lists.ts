import { readFileSync } from 'node:fs';
import { BENCH_SECRET as SECRET, createInAppWorkflow, load as runLoad, seedListMessages, startBenchHerald } from './lib/bench-client.js';
import { cpuMsOf } from './lib/process-cpu.js';

/**
 * `node --import tsx bench/profile-lists.ts [seconds] [profileDir]` (issue 24): the messages-list phase of bench:http
 * alone (300 subscribers with 12 in-app messages each, pages 0 and 1 in turn, 50 connections), with Herald's process CPU
 * time per request and, when a profile directory is given, a `--cpu-prof` profile of the Herald process (written on
 * exit; it covers the seeding too, so compare its list functions, not its totals).
 */
const seconds = Number(process.argv[2] ?? 5);
const profileDir = process.argv[3];
const cpuMs = (pid: number) => cpuMsOf(pid)!;

const herald = await startBenchHerald({ profileDir });
try {
  await createInAppWorkflow(herald.url, SECRET, 'bench-http', { name: 'bench http' });
  const subscribers = Array.from({ length: 300 }, (_, i) => `list-${i}`);
  await seedListMessages(herald.url, SECRET, 'bench-http', subscribers);
  const paths = subscribers.flatMap((id) => [0, 1].map((page) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`));
  const pid = herald.child.pid!;
  const cpuBefore = cpuMs(pid);
  const statBefore = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const statusBefore = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ctxBefore = { v: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(statusBefore)![1]), n: Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(statusBefore)![1]) };
  const load = await runLoad({ kind: 'rotate', url: herald.url, paths, connections: 50, durationSeconds: seconds, headers: { authorization: `ApiKey ${SECRET}` } });
  const cpuAfter = cpuMs(pid);
  const statAfter = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ctx = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)![1]);
  const extra = { utimeMs: (Number(statAfter[11]) - Number(statBefore[11])) * 10, stimeMs: (Number(statAfter[12]) - Number(statBefore[12])) * 10, voluntary: ctx('voluntary_ctxt_switches') - ctxBefore.v, involuntary: ctx('nonvoluntary_ctxt_switches') - ctxBefore.n };
  console.log(JSON.stringify({
    ok: load.ok, perSecond: Math.round(load.requestsPerSecond), latencyMs: load.latencyMs,
    cpuUsPerRequest: Math.round(((cpuAfter - cpuBefore) / load.ok) * 1000),
    cpuShare: Math.round(((cpuAfter - cpuBefore) / load.elapsedMs) * 100) / 100, ...extra,
  }));
} finally {
  await herald.stop();
}
