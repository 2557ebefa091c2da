import type { JobStatus } from './types.js';

/**
 * An event's status, from its jobs (Herald's extension filter of the event list, and the dashboard's badge):
 * any failed job makes it `failed`; otherwise any job still to run makes it `pending`; an event whose jobs were all
 * canceled is `canceled`; any other event with jobs is `completed`. An event with no jobs has none of these.
 */
export const EVENT_STATUSES = ['failed', 'pending', 'completed', 'canceled'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** Job statuses that mean the step has still to run or finish. */
export const PENDING_JOB_STATUSES: readonly JobStatus[] = ['pending', 'queued', 'running', 'delayed'];

export function eventStatusOf(jobs: ReadonlyArray<{ status: string }>): EventStatus | undefined {
  if (jobs.length === 0) return undefined;
  if (jobs.some((job) => job.status === 'failed')) return 'failed';
  if (jobs.some((job) => (PENDING_JOB_STATUSES as readonly string[]).includes(job.status))) return 'pending';
  if (jobs.every((job) => job.status === 'canceled')) return 'canceled';
  return 'completed';
}
