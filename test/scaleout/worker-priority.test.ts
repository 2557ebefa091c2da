import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { servicesAvailable } from '../helpers/databases.js';
import { startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';

/**
 * HERALD_WORKER_NICE (issue 24): a `herald worker` sharing a host with an API process leaves it the CPU. Linux keeps
 * the nice value per thread, and Node's own threads start before any script runs, so every thread of the process
 * must carry it, not just the main one. The API process keeps its priority.
 */
const PROCESS_TEST_MS = 240_000;

/** The niceness of each thread of a process (/proc/<pid>/task/<tid>/stat, 19th field; the command is in parentheses). */
function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe.skipIf(process.platform !== 'linux')('the scale-out worker process priority', () => {
  let processes: ScaleoutProcesses | undefined;

  beforeAll(async () => {
    if (!(await servicesAvailable(['PostgreSQL', 'Redis']))) return;
    processes = await startScaleoutProcesses({ apis: 1, workers: 1, env: { HERALD_WORKER_NICE: '7' } });
  }, PROCESS_TEST_MS);

  afterAll(async () => {
    await processes?.close();
  });

  it('defaults to 19, 0 to 19 accepted', () => {
    expect(loadConfig({}).worker.nice).toBe(19);
    expect(loadConfig({ HERALD_WORKER_NICE: '0' }).worker.nice).toBe(0);
    expect(() => loadConfig({ HERALD_WORKER_NICE: '20' })).toThrow(/HERALD_WORKER_NICE/);
  });

  it('lowers every thread of the worker to HERALD_WORKER_NICE and leaves the API alone', async (context) => {
    if (!processes) return context.skip();
    // Children start at this process's niceness (a test run under `nice` passes it on); the worker only lowers.
    const inherited = getPriority();
    const expected = Math.max(7, inherited);
    const worker = threadNiceness(processes.workers[0]!.child.pid!);
    expect(worker.length).toBeGreaterThan(4);
    expect(new Set(worker)).toEqual(new Set([expected]));
    expect(new Set(threadNiceness(processes.apis[0]!.child.pid!))).toEqual(new Set([inherited]));
    expect(processes.workers[0]!.output()).toContain(`"nice":${expected}`);
  });
});
