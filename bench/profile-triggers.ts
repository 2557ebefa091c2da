import { BENCH_SECRET as SECRET, waitForMessages } from './lib/bench-client.js';
import { profileArguments, runTriggerPhase } from './lib/trigger-phase.js';

/**
 * `node --import tsx bench/profile-triggers.ts [seconds] [profileDir]` (issue 24): the trigger phase of bench:http
 * alone, with Herald's process CPU time per accepted trigger (read from /proc, robust to a shared machine) and, when a
 * profile directory is given, a `--cpu-prof` profile of the Herald process written there on its exit.
 */
const { seconds, profileDir } = profileArguments();

// LOG_LEVEL=info writes the request line per trigger, as `npm start` and bench:http do (default here: warn, none).
const env: Record<string, string> = process.env.LOG_LEVEL ? { LOG_LEVEL: process.env.LOG_LEVEL } : {};
await runTriggerPhase({ seconds, profileDir, env, subscriberPrefix: 'p' }, async ({ url, load, accepted, started, cpuBefore, cpuAfterLoad, cpuNow }) => {
  const { count, at: lastChange } = await waitForMessages(url, SECRET, accepted, 300_000);
  const cpuEnd = cpuNow();
  console.log(JSON.stringify({
    accepted, perSecond: Math.round(load.requestsPerSecond), latencyMs: load.latencyMs,
    deliveries: count, deliveriesPerSecond: Math.round((count * 1000) / (lastChange - started)),
    cpuMsPerTriggerWithDelivery: Math.round(((cpuEnd - cpuBefore) / accepted) * 1000) / 1000,
    cpuMsDuringLoadPerTrigger: Math.round(((cpuAfterLoad - cpuBefore) / accepted) * 1000) / 1000,
    cpuShareDuringLoad: Math.round(((cpuAfterLoad - cpuBefore) / load.elapsedMs) * 100) / 100,
  }));
});
