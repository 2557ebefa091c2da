import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU time of the processes of a scaled-out Herald, for CPU per operation (issue 24's scaling model): the API and
 * worker processes, the PostgreSQL backends serving their connections and the Redis server they talk to. The
 * backends and Redis are found through the processes' TCP connections (`ss -tnp`), so other users of the shared
 * PostgreSQL are not counted. Linux only; on any failure a group reads as absent rather than failing the run.
 */
export interface CpuGroups {
  [group: string]: { pids: number[]; cpuMs: number };
}

const TICKS_PER_SECOND = 100;

/** User + system CPU time of one process so far, in ms (undefined when it cannot be read). */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

interface Connection { localPort: number; peerPort: number; pid?: number }

function connections(): Connection[] {
  try {
    const out = execFileSync('ss', ['-tnpH', 'state', 'established'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    return out.split('\n').flatMap((line) => {
      const match = /\S+:(\d+)\s+\S+:(\d+)\s*(?:users:\(\("[^"]*",pid=(\d+))?/.exec(line.trim().split(/\s+/).slice(2).join(' '));
      return match ? [{ localPort: Number(match[1]), peerPort: Number(match[2]), pid: match[3] ? Number(match[3]) : undefined }] : [];
    });
  } catch {
    return [];
  }
}

/** The pids of each group now: `postgres` = backends connected to the given processes, `redis` = the server on `redisPort`. */
export function findGroups(processes: Record<string, number>, postgresPort: number, redisPort: number): Record<string, number[]> {
  const all = connections();
  const ours = new Set(Object.values(processes));
  const clientPorts = new Set(all.filter((c) => c.pid !== undefined && ours.has(c.pid)).map((c) => c.localPort));
  const servers = (port: number) => [...new Set(all.filter((c) => c.localPort === port && clientPorts.has(c.peerPort) && c.pid !== undefined).map((c) => c.pid!))];
  return { ...Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, [pid]])), postgres: servers(postgresPort), redis: servers(redisPort) };
}

/** CPU milliseconds of every pid of every group (a pid seen only at one end counts from zero or to its last reading). */
export function readCpu(groups: Record<string, number[]>): Record<string, Map<number, number>> {
  return Object.fromEntries(Object.entries(groups).map(([name, pids]) => [name, new Map(pids.flatMap((pid) => {
    const ms = cpuMsOf(pid);
    return ms === undefined ? [] : [[pid, ms] as const];
  }))]));
}

/** CPU ms per operation of each group between two readings (pids of either reading). */
export function cpuPerOperation(before: Record<string, Map<number, number>>, after: Record<string, Map<number, number>>, operations: number): Record<string, { cpuMs: number; msPerOperation: number; processes: number }> {
  const result: Record<string, { cpuMs: number; msPerOperation: number; processes: number }> = {};
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const b = before[name] ?? new Map<number, number>();
    const a = after[name] ?? new Map<number, number>();
    let total = 0;
    const pids = new Set([...b.keys(), ...a.keys()]);
    for (const pid of pids) total += (a.get(pid) ?? b.get(pid) ?? 0) - (b.get(pid) ?? 0);
    result[name] = { cpuMs: Math.round(total), msPerOperation: Math.round((total / Math.max(1, operations)) * 1000) / 1000, processes: pids.size };
  }
  return result;
}

/** A process's niceness (/proc/<pid>/stat, the 19th field; the 2nd, the command, is in parentheses and may hold spaces). */
export function niceOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return undefined;
  }
}
