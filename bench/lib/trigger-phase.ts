import { BENCH_SECRET, createInAppWorkflow, load as runLoad, startBenchHerald, type LoadResult } from './bench-client.js';
import { cpuMsOf } from './process-cpu.js';

/** What the trigger phase measured, for the profile script to go on from (its Herald still runs). */
export interface TriggerPhase {
  url: string;
  load: LoadResult;
  /** Triggers answered 201. */
  accepted: number;
  /** Date.now() just before the load started. */
  started: number;
  /** Herald's process CPU ms (from /proc) just before and just after the load. */
  cpuBefore: number;
  cpuAfterLoad: number;
  /** Herald's process CPU ms now. */
  cpuNow(): number;
}

/**
 * The trigger phase of bench:http that bench/profile-triggers.ts and bench/profile-drain.ts share: an embedded Herald
 * (a `--cpu-prof` profile written to `profileDir` on its exit when given), the `bench-http` in-app workflow, 50
 * connections triggering it for `seconds` with a new subscriber per trigger (`<subscriberPrefix>-<time>-…`), Herald's
 * CPU read before and after the load. `then` measures what follows; Herald is stopped after it, even when it throws.
 */
export async function runTriggerPhase(
  options: { seconds: number; profileDir?: string; env?: Record<string, string>; subscriberPrefix: string },
  then: (phase: TriggerPhase) => Promise<void>,
): Promise<void> {
  const herald = await startBenchHerald({ profileDir: options.profileDir, env: options.env });
  try {
    await createInAppWorkflow(herald.url, BENCH_SECRET, 'bench-http', { name: 'bench http' });
    const pid = herald.child.pid!;
    const cpuNow = () => cpuMsOf(pid)!;
    const cpuBefore = cpuNow();
    const started = Date.now();
    const load = await runLoad({
      kind: 'trigger', url: herald.url, connections: 50, durationSeconds: options.seconds,
      headers: { authorization: `ApiKey ${BENCH_SECRET}` }, workflowId: 'bench-http',
      subscriberPrefix: `${options.subscriberPrefix}-${Date.now().toString(36)}`,
    });
    const cpuAfterLoad = cpuNow();
    await then({ url: herald.url, load, accepted: load.statusCounts['201'] ?? 0, started, cpuBefore, cpuAfterLoad, cpuNow });
  } finally {
    await herald.stop();
  }
}

/** `[seconds] [profileDir]`, the profile scripts' command line (seconds default 5). */
export function profileArguments(argv = process.argv): { seconds: number; profileDir: string | undefined } {
  return { seconds: Number(argv[2] ?? 5), profileDir: argv[3] };
}
