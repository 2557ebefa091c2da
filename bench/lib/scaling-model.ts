/**
 * The scaling model of `npm run bench:scaling` (issue 24 point 4): the throughput of N Herald machines (each running
 * API and worker processes) in front of one PostgreSQL and one Redis, from what one operation costs in each tier.
 *
 * Every tier is assumed CPU- or rate-bound and linear in its load (no contention collapse, no network limit):
 *   Herald machines   N × coresPerMachine × 1000 / (API + worker CPU ms per operation)
 *   PostgreSQL CPU    postgresCores × 1000 / (backend CPU ms per operation)
 *   PostgreSQL WAL    commitsPerSecond ceiling / commits per operation
 *   Redis CPU         1 core × 1000 / (redis-server CPU ms per operation)   (Redis runs commands on one thread)
 *   Redis commands    commandsPerSecond ceiling / commands per operation
 * and the throughput is the smallest of them, limited by that tier.
 */
export interface OperationCosts {
  /** CPU milliseconds per operation in the Herald API processes. */
  apiCpuMs: number;
  /** CPU milliseconds per operation in the Herald worker processes. */
  workerCpuMs: number;
  /** CPU milliseconds per operation in the PostgreSQL backends. */
  postgresCpuMs: number;
  /** PostgreSQL commits per operation (each waits for a WAL flush, shared by concurrent commits). */
  postgresCommits: number;
  /** CPU milliseconds per operation in redis-server. */
  redisCpuMs: number;
  /** Redis commands per operation (BullMQ's scripts count as one each). */
  redisCommands: number;
}

export interface Capacity {
  /** Cores of each Herald machine, all given to its API and worker processes. */
  coresPerMachine: number;
  /** Cores of the PostgreSQL machine. */
  postgresCores: number;
  /** Commits per second PostgreSQL sustains with many clients (WAL flush rate × commits per flush). */
  postgresCommitsPerSecond: number;
  /** Commands per second one Redis sustains (its single command thread). */
  redisCommandsPerSecond: number;
}

export type Tier = 'herald' | 'postgresCpu' | 'postgresCommits' | 'redisCpu' | 'redisCommands';

export interface Projection {
  machines: number;
  /** Operations per second: the smallest tier capacity. */
  perSecond: number;
  limitedBy: Tier;
  /** Operations per second each tier alone would allow (Infinity when the operation costs that tier nothing). */
  tiers: Record<Tier, number>;
}

function capacity(units: number, costPerOperation: number): number {
  if (!(costPerOperation >= 0) || !Number.isFinite(costPerOperation)) throw new RangeError(`a cost must be a finite number ≥ 0, not ${costPerOperation}`);
  return costPerOperation === 0 ? Infinity : units / costPerOperation;
}

export function projectThroughput(costs: OperationCosts, assumed: Capacity, machines: number): Projection {
  if (!Number.isInteger(machines) || machines < 1) throw new RangeError(`machines must be a whole number ≥ 1, not ${machines}`);
  for (const [name, value] of Object.entries(assumed)) {
    if (!(value > 0) || !Number.isFinite(value)) throw new RangeError(`${name} must be a finite number > 0, not ${value}`);
  }
  const heraldCpuMs = costs.apiCpuMs + costs.workerCpuMs;
  if (heraldCpuMs <= 0) throw new RangeError('an operation must cost the Herald processes some CPU');
  const tiers: Record<Tier, number> = {
    herald: capacity(machines * assumed.coresPerMachine * 1000, heraldCpuMs),
    postgresCpu: capacity(assumed.postgresCores * 1000, costs.postgresCpuMs),
    postgresCommits: capacity(assumed.postgresCommitsPerSecond, costs.postgresCommits),
    redisCpu: capacity(1000, costs.redisCpuMs),
    redisCommands: capacity(assumed.redisCommandsPerSecond, costs.redisCommands),
  };
  let limitedBy: Tier = 'herald';
  // At a tie the shared tier is named: adding machines no longer helps.
  for (const tier of Object.keys(tiers) as Tier[]) {
    if (tiers[tier] < tiers[limitedBy] || (limitedBy === 'herald' && tiers[tier] === tiers.herald)) limitedBy = tier;
  }
  return { machines, perSecond: tiers[limitedBy], limitedBy, tiers };
}

/** The smallest machine count at which a shared tier, not the Herald machines, limits (undefined: never). */
export function saturationPoint(costs: OperationCosts, assumed: Capacity): { machines: number; limitedBy: Tier } | undefined {
  const shared = projectThroughput(costs, assumed, 1);
  const ceiling = Math.min(shared.tiers.postgresCpu, shared.tiers.postgresCommits, shared.tiers.redisCpu, shared.tiers.redisCommands);
  if (!Number.isFinite(ceiling)) return undefined;
  const machines = Math.max(1, Math.ceil(ceiling / shared.tiers.herald));
  return { machines, limitedBy: projectThroughput(costs, assumed, machines).limitedBy };
}
