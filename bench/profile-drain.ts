import { loadavg } from 'node:os';
import { BENCH_SECRET as SECRET, inAppMessageCount, waitForMessages } from './lib/bench-client.js';
import { profileArguments, runTriggerPhase } from './lib/trigger-phase.js';

/**
 * `node --import tsx bench/profile-drain.ts [seconds] [profileDir]` (issue 24): the embedded drain's CPU per delivery.
 * The trigger phase of bench:http (50 connections for `seconds`, a new subscriber per trigger), then Herald's process
 * CPU time (from /proc) from the end of that load to the last message, over the messages made in that window. CPU per
 * delivery holds on a shared machine where rates move by 2x between runs. Also prints the trigger phase's figures.
 */
const { seconds, profileDir } = profileArguments();

const loadAtStart = loadavg()[0]!;
await runTriggerPhase({ seconds, profileDir, subscriberPrefix: 'd' }, async ({ url, load, accepted, started, cpuBefore, cpuAfterLoad, cpuNow }) => {
  const deliveredDuringLoad = await inAppMessageCount(url, SECRET);
  const drainStart = Date.now();
  const { count, at: lastChange } = await waitForMessages(url, SECRET, accepted, 300_000);
  const cpuEnd = cpuNow();
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
});
