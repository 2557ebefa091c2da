import { describe, expect, it } from 'vitest';
import { projectThroughput, saturationPoint, type Capacity, type OperationCosts } from '../../bench/lib/scaling-model.js';

const costs: OperationCosts = { apiCpuMs: 1.5, workerCpuMs: 2.5, postgresCpuMs: 1, postgresCommits: 3, redisCpuMs: 0.2, redisCommands: 10 };
const capacity: Capacity = { coresPerMachine: 2, postgresCores: 4, postgresCommitsPerSecond: 12_000, redisCommandsPerSecond: 100_000 };

describe('scaling model', () => {
  it('gives each tier its capacity over the per-operation cost', () => {
    const projection = projectThroughput(costs, capacity, 3);
    expect(projection.tiers).toEqual({
      herald: (3 * 2 * 1000) / 4,
      postgresCpu: 4000,
      postgresCommits: 4000,
      redisCpu: 5000,
      redisCommands: 10_000,
    });
  });

  it('grows linearly with the Herald machines until the smallest shared tier limits it', () => {
    expect(projectThroughput(costs, capacity, 1)).toMatchObject({ perSecond: 500, limitedBy: 'herald' });
    expect(projectThroughput(costs, capacity, 4)).toMatchObject({ perSecond: 2000, limitedBy: 'herald' });
    const many = projectThroughput({ ...costs, postgresCommits: 4 }, capacity, 20);
    expect(many).toMatchObject({ perSecond: 3000, limitedBy: 'postgresCommits' });
    expect(projectThroughput({ ...costs, postgresCommits: 4 }, capacity, 40).perSecond).toBe(3000);
  });

  it('names the machine count where a shared tier takes over', () => {
    expect(saturationPoint(costs, capacity)).toEqual({ machines: 8, limitedBy: 'postgresCpu' });
    expect(saturationPoint({ ...costs, redisCpuMs: 1.25 }, capacity)).toEqual({ machines: 2, limitedBy: 'redisCpu' });
    expect(saturationPoint({ ...costs, redisCpuMs: 2 }, capacity)).toEqual({ machines: 1, limitedBy: 'redisCpu' });
  });

  it('leaves out a tier an operation does not use, and refuses nonsense', () => {
    const noRedis = projectThroughput({ ...costs, redisCpuMs: 0, redisCommands: 0 }, capacity, 100);
    expect(noRedis.tiers.redisCpu).toBe(Infinity);
    expect(noRedis.limitedBy).toBe('postgresCpu');
    expect(() => projectThroughput(costs, capacity, 0)).toThrow(RangeError);
    expect(() => projectThroughput({ ...costs, postgresCpuMs: -1 }, capacity, 1)).toThrow(RangeError);
    expect(() => projectThroughput(costs, { ...capacity, postgresCommitsPerSecond: 0 }, 1)).toThrow(RangeError);
    expect(() => projectThroughput({ ...costs, apiCpuMs: 0, workerCpuMs: 0 }, capacity, 1)).toThrow(RangeError);
  });
});
