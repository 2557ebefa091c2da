import { loadavg } from 'node:os';
import { BENCH_SECRET as SECRET, createInAppWorkflow, inAppMessageCount, load as runLoad, startBenchHerald, waitForMessages } from './lib/bench-client.js';
import { cpuMsOf } from './lib/process-cpu.js';

/**
 * `node --import tsx bench/profile-drain.ts [seconds] [profileDir]` (issue 24): the embedded drain's CPU per delivery.
 * The trigger phase of bench:http (50 connections for `seconds`, a new subscriber per trigger), then Herald's process
 * CPU time (from /proc) from the end of that load to the last message, over the messages made in that window. CPU per
 * delivery holds on a shared machine where rates move by 2x between runs. Also prints the trigger phase's figures.
 */
const seconds = Number(process.argv[2] ?? 5);
const profileDir = process.argv[3];
const cpuMs = (pid: number) => cpuMsOf(pid)!;

const loadAtStart = loadavg()[0]!;
const herald = await startBenchHerald({ profileDir });
try {
  await createInAppWorkflow(herald.url, SECRET, 'bench-http', { name: 'bench http' });
  const pid = herald.child.pid!;
  const cpuBefore = cpuMs(pid);
  const started = Date.now();
  const load = await runLoad({ kind: 'trigger', url: herald.url, connections: 50, durationSeconds: seconds, headers: { authorization: `ApiKey ${SECRET}` }, workflowId: 'bench-http', subscriberPrefix: `d-${Date.now().toString(36)}` });
  const cpuAfterLoad = cpuMs(pid);
  const deliveredDuringLoad = await inAppMessageCount(herald.url, SECRET);
  const drainStart = Date.now();
  const accepted = load.statusCounts['201'] ?? 0;
  const { count, at: lastChange } = await waitForMessages(herald.url, SECRET, accepted, 300_000);
  const cpuEnd = cpuMs(pid);
  const drained = count - deliveredDuringLoad;
  const round3 = (value: number) => Math.round(value * 1000) / 1000;
  console.log(JSON.stringify({
    load: [round3(loadAtStart), round3(loadavg()[0]!)],
    accepted, triggersPerSecond: Math.round(load.requestsPerSecond), latencyMs: load.latencyMs,
    deliveredDuringLoad, drained, drainMs: lastChange - drainStart,
    deliveriesPerSecond: Math.round((count * 1000) / (lastChange - started)),
    drainCpuMsPerDelivery: drained > 0 ? round3((cpuEnd - cpuAfterLoad) / drained) : null,
    drainCpuShare: round3((cpuEnd - cpuAfterLoad) / Math.max(1, lastChange - drainStart)),
    cpuMsDuringLoadPerTrigger: round3((cpuAfterLoad - cpuBefore) / accepted),
  }));
} finally {
  await herald.stop();
}
