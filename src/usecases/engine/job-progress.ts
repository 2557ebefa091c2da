import { isoNow } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import type { ExecutionDetail, ExecutionDetailSource, ExecutionDetailStatus, Job, JobStatus } from '../../domain/types.js';
import { JOB_NAMES, dedupeKeys, withTraceparent, type RunStepPayload } from '../../queue/jobs.js';
import type { Store, StoredJob } from '../../store/ports.js';
import type { Deps } from '../deps.js';

/** A queue job to add once the database writes that call for it have committed. */
export interface FollowUp {
  environmentId: string;
  jobId: string;
  dedupeKey: string;
  /** Epoch ms; absent = now. */
  runAt?: number;
}

export const TERMINAL_JOB_STATUSES: ReadonlySet<JobStatus> = new Set(['completed', 'failed', 'skipped', 'canceled', 'merged']);

export function executionDetail(
  deps: Pick<Deps, 'clock'>,
  status: ExecutionDetailStatus,
  detail: string,
  extra: { source?: ExecutionDetailSource; isRetry?: boolean; raw?: string | null; providerId?: string } = {},
): ExecutionDetail {
  const now = deps.clock.now();
  const record: ExecutionDetail = {
    _id: newId(now),
    createdAt: new Date(now).toISOString(),
    status,
    detail,
    isRetry: extra.isRetry ?? false,
    isTest: false,
    source: extra.source ?? 'Internal',
    raw: extra.raw ?? null,
  };
  if (extra.providerId) record.providerId = extra.providerId;
  return record;
}

export async function setJobStatus(
  deps: Pick<Deps, 'clock'>,
  store: Store,
  job: StoredJob,
  status: JobStatus,
  detail?: ExecutionDetail,
): Promise<void> {
  job.status = status;
  job.updatedAt = isoNow(deps.clock);
  await store.jobs.save(job, detail);
}

/** The jobs of the same event as `job`, typed as stored (the notification repository returns them so). */
export function storedJobsOf(jobs: Job[] | undefined): StoredJob[] | undefined {
  if (!jobs || jobs.some((candidate) => typeof (candidate as Partial<StoredJob>).stepIndex !== 'number')) return undefined;
  return jobs as StoredJob[];
}

/**
 * Moves the workflow on after `job` ended: the next step becomes `queued` (with its Queued detail) and is
 * returned as a follow-up. Safe to repeat: a next step already queued or running is only re-enqueued
 * (its dedupe key makes that a no-op while the first queue row exists).
 */
export async function queueNextStep(deps: Pick<Deps, 'clock'>, store: Store, job: StoredJob, siblings?: StoredJob[]): Promise<FollowUp[]> {
  const jobs = siblings ?? (await store.jobs.listForNotification(job._environmentId, job._notificationId));
  const next = jobs.find((candidate) => candidate.stepIndex === job.stepIndex + 1);
  if (!next) return [];
  if (next.status === 'pending') {
    await setJobStatus(deps, store, next, 'queued', executionDetail(deps, 'Queued', 'Step queued'));
  } else if (next.status !== 'queued' && next.status !== 'running') {
    return [];
  }
  return [{ environmentId: next._environmentId, jobId: next._id, dedupeKey: dedupeKeys.step(next._id) }];
}

/** Ends every later step of the event that has not run yet (throttled, merged, or stopped on failure). */
export async function endRemainingSteps(
  deps: Pick<Deps, 'clock'>,
  store: Store,
  job: StoredJob,
  siblings: StoredJob[] | undefined,
  status: Extract<JobStatus, 'skipped' | 'merged' | 'canceled'>,
  reason: string,
): Promise<void> {
  const jobs = siblings ?? (await store.jobs.listForNotification(job._environmentId, job._notificationId));
  for (const later of jobs) {
    if (later.stepIndex <= job.stepIndex || !['pending', 'queued'].includes(later.status)) continue;
    await setJobStatus(deps, store, later, status, executionDetail(deps, status === 'canceled' ? 'Warning' : 'Success', reason));
  }
}

export async function enqueueFollowUps(deps: Deps, followUps: FollowUp[]): Promise<void> {
  for (const followUp of followUps) {
    // The next step's span joins the trace of the step (or trigger) running now.
    const payload = withTraceparent<RunStepPayload>({ environmentId: followUp.environmentId, jobId: followUp.jobId }, deps.tracing.traceparent());
    const delayMs = followUp.runAt === undefined ? 0 : Math.max(0, followUp.runAt - deps.clock.now());
    await deps.queue.enqueue(JOB_NAMES.runStep, payload, { dedupeKey: followUp.dedupeKey, delayMs });
  }
}
