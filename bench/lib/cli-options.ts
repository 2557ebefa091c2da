import { InvalidArgumentError } from 'commander';

/** Option parsers shared by the benchmark scripts' command lines. */

/** A whole number ≥ 1; `1_000_000` is read as 1000000. */
export function positiveInteger(value: string): number {
  const parsed = Number(value.replace(/_/g, ''));
  if (!Number.isInteger(parsed) || parsed < 1) throw new InvalidArgumentError('must be a positive integer');
  return parsed;
}

export type BenchMode = 'embedded' | 'scaleout';

/** `--mode`: embedded (SQLite, in-process queue) or scaleout (PostgreSQL + Redis). */
export function benchMode(value: string): BenchMode {
  if (value !== 'embedded' && value !== 'scaleout') throw new InvalidArgumentError('must be embedded or scaleout');
  return value;
}
