import { BENCH_SECRET as SECRET, createInAppWorkflow, load as runLoad, startBenchHerald, waitForMessages } from './lib/bench-client.js';
import { cpuMsOf } from './lib/process-cpu.js';

/**
 * `node --import tsx bench/profile-triggers.ts [seconds] [profileDir]` (issue 24): the trigger phase of bench:http
 * alone, with Herald's process CPU time per accepted trigger (read from /proc, robust to a shared machine) and, when a
 * profile directory is given, a `--cpu-prof` profile of the Herald process written there on its exit.
 */
const seconds = Number(process.argv[2] ?? 5);
const profileDir = process.argv[3];
const cpuMs = (pid: number) => cpuMsOf(pid)!;

// LOG_LEVEL=info writes the request line per trigger, as `npm start` and bench:http do (default here: warn, none).
const herald = await startBenchHerald({ profileDir, env: process.env.LOG_LEVEL ? { LOG_LEVEL: process.env.LOG_LEVEL } : {} });
try {
  await createInAppWorkflow(herald.url, SECRET, 'bench-http', { name: 'bench http' });
  const pid = herald.child.pid!;
  const cpuBefore = cpuMs(pid);
  const started = Date.now();
  const load = await runLoad({ kind: 'trigger', url: herald.url, connections: 50, durationSeconds: seconds, headers: { authorization: `ApiKey ${SECRET}` }, workflowId: 'bench-http', subscriberPrefix: `p-${Date.now().toString(36)}` });
  const cpuAfterLoad = cpuMs(pid);
  const accepted = load.statusCounts['201'] ?? 0;
  const { count, at: lastChange } = await waitForMessages(herald.url, SECRET, accepted, 300_000);
  const cpuEnd = cpuMs(pid);
  console.log(JSON.stringify({
    accepted, perSecond: Math.round(load.requestsPerSecond), latencyMs: load.latencyMs,
    deliveries: count, deliveriesPerSecond: Math.round((count * 1000) / (lastChange - started)),
    cpuMsPerTriggerWithDelivery: Math.round(((cpuEnd - cpuBefore) / accepted) * 1000) / 1000,
    cpuMsDuringLoadPerTrigger: Math.round(((cpuAfterLoad - cpuBefore) / accepted) * 1000) / 1000,
    cpuShareDuringLoad: Math.round(((cpuAfterLoad - cpuBefore) / load.elapsedMs) * 100) / 100,
  }));
} finally {
  await herald.stop();
}
