import type { Caller } from '../../domain/types.js';
import type { RetentionSweepSummary } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { retentionCutoffs } from '../retention/sweep-retention.js';

export interface RetentionSettings {
  /** Notification events with their jobs, execution details and trigger records; `days` null = kept forever. */
  events: { days: number | null; deletesBefore: string | null; variable: 'HERALD_RETENTION_DAYS' };
  messages: { days: number | null; deletesBefore: string | null; variable: 'HERALD_MESSAGE_RETENTION_DAYS' };
  sweepIntervalSeconds: number;
  /** Embedded SQLite gives freed space back to the file system; PostgreSQL leaves it to its autovacuum. */
  database: 'sqlite' | 'postgres';
  lastSweep: RetentionSweepSummary | null;
}

/** The retention in force (set by the server's configuration, the same for every environment) and the last sweep. */
export async function getRetentionSettings(deps: Pick<Deps, 'config' | 'clock' | 'store'>, _input: { caller: Caller }): Promise<RetentionSettings> {
  const { retention } = deps.config;
  const cutoffs = retentionCutoffs(deps);
  return {
    events: { days: retention.eventDays ?? null, deletesBefore: cutoffs.events ?? null, variable: 'HERALD_RETENTION_DAYS' },
    messages: { days: retention.messageDays ?? null, deletesBefore: cutoffs.messages ?? null, variable: 'HERALD_MESSAGE_RETENTION_DAYS' },
    sweepIntervalSeconds: Math.round(retention.sweepIntervalMs / 1000),
    database: deps.config.databaseUrl ? 'postgres' : 'sqlite',
    lastSweep: (await deps.store.retention.lastSweep()) ?? null,
  };
}
