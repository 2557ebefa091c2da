import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findGroups } from '../../bench/lib/process-cpu.js';
import { servicesAvailable } from '../helpers/databases.js';
import { SCALEOUT_SECRET, startScaleoutProcesses, type ScaleoutProcesses } from '../helpers/scaleout-processes.js';

/**
 * An API process's PostgreSQL pool (issue 24, session 20): 5 connections unless HERALD_API_DATABASE_POOL_SIZE or
 * HERALD_DATABASE_POOL_SIZE says otherwise, so that many requests at once open at most 5 backends; the worker keeps
 * HERALD_DATABASE_POOL_SIZE's 10.
 */
const PROCESS_TEST_MS = 240_000;

describe.skipIf(process.platform !== 'linux')('the scale-out API process pool', () => {
  let processes: ScaleoutProcesses | undefined;

  beforeAll(async () => {
    if (!(await servicesAvailable(['PostgreSQL', 'Redis']))) return;
    processes = await startScaleoutProcesses({ apis: 1, workers: 0 });
  }, PROCESS_TEST_MS);

  afterAll(async () => {
    await processes?.close();
  });

  it('opens at most 5 PostgreSQL connections under 40 requests at once', async (context) => {
    if (!processes) return context.skip();
    const api = processes.apis[0]!;
    const headers = { authorization: `ApiKey ${SCALEOUT_SECRET}` };
    for (let round = 0; round < 5; round++) {
      const responses = await Promise.all(
        Array.from({ length: 40 }, (_, i) => fetch(`${api.url}/v1/messages?subscriberId=pool-${round}-${i}&limit=10`, { headers })),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(40).fill(200));
    }
    // The backends whose client socket belongs to the API process (pg-pool keeps idle connections for 10 s).
    const backends = findGroups({ api: api.child.pid! }, 5432, -1).postgres!;
    expect(backends.length).toBeGreaterThan(1);
    expect(backends.length).toBeLessThanOrEqual(5);
  }, PROCESS_TEST_MS);
});
