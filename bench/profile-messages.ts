import { api, BENCH_SECRET as SECRET, createInAppWorkflow, load as runLoad, seedListMessages, startBenchHerald } from './lib/bench-client.js';
import { cpuMsOf } from './lib/process-cpu.js';

/**
 * `node --import tsx bench/profile-messages.ts [seconds] [profileDir]` (issue 24): the messages-list phase of
 * bench:http alone (300 subscribers with 12 in-app messages each, `GET /v1/messages?subscriberId=…&limit=10&page=0|1`
 * in turn, 50 connections), with Herald's process CPU time per list request (read from /proc, robust to a shared
 * machine) and, when a profile directory is given, a `--cpu-prof` profile of the Herald process written there on exit.
 */
const seconds = Number(process.argv[2] ?? 5);
const profileDir = process.argv[3];
const SUBSCRIBERS = 300;
const cpuMs = (pid: number) => cpuMsOf(pid)!;

const herald = await startBenchHerald({ profileDir });
try {
  await createInAppWorkflow(herald.url, SECRET, 'bench-http', { name: 'bench http' });
  const prefix = `list-${Date.now().toString(36)}`;
  const subscribers = Array.from({ length: SUBSCRIBERS }, (_, i) => `${prefix}-${i}`);
  await seedListMessages(herald.url, SECRET, 'bench-http', subscribers);
  const paths = subscribers.flatMap((id) => [0, 1].map((page) => `/v1/messages?subscriberId=${id}&limit=10&page=${page}`));
  const bytes = (await api(herald.url, SECRET, 'GET', paths[0]!)).raw.length;
  const options = (duration: number) => ({ kind: 'rotate', url: herald.url, paths, connections: 50, durationSeconds: duration, headers: { authorization: `ApiKey ${SECRET}` } });
  await runLoad(options(1)); // warm-up
  const pid = herald.child.pid!;
  const cpuBefore = cpuMs(pid);
  const load = await runLoad(options(seconds));
  const cpuAfter = cpuMs(pid);
  console.log(JSON.stringify({
    bytes, ok: load.ok, statusCounts: load.statusCounts, perSecond: Math.round(load.requestsPerSecond), latencyMs: load.latencyMs,
    cpuMsPerRequest: Math.round(((cpuAfter - cpuBefore) / load.ok) * 1000) / 1000,
    cpuShareDuringLoad: Math.round(((cpuAfter - cpuBefore) / load.elapsedMs) * 100) / 100,
  }));
} finally {
  await herald.stop();
}
