import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers this process's CPU priority to `nice` (Unix niceness, 0-19; 0 leaves it alone) on every one of its threads.
 * Linux keeps the nice value per thread, and Node starts V8's and libuv's threads before any script runs, so a
 * `setPriority(0, …)` from the main thread would leave them at the old value: every thread listed in /proc/self/task
 * is set instead (elsewhere, the process as the OS reports it). Only lowers: raising priority needs privileges, and a
 * process already started under `nice` keeps the higher of the two. Returns the main thread's niceness afterwards.
 */
export function lowerProcessPriority(nice: number): number {
  if (nice <= 0) return getPriority();
  const threads = listThreads();
  for (const thread of threads ?? [0]) {
    try {
      if (getPriority(thread) < nice) setPriority(thread, nice);
    } catch {
      // A thread that ended meanwhile, or a platform without per-thread priorities.
    }
  }
  return getPriority();
}

function listThreads(): number[] | undefined {
  try {
    return readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    return undefined;
  }
}
