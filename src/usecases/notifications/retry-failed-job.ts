import { ConflictError, NotFoundError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { Caller } from '../../domain/types.js';
import { dedupeKeys } from '../../queue/jobs.js';
import type { StoredJob } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { enqueueFollowUps, executionDetail, setJobStatus } from '../engine/job-progress.js';
import { manualRetriesOf, stoppedByFailureReason } from '../engine/run-job.js';

export interface RetryFailedJobInput {
  caller: Caller;
  notificationId: string;
  jobId: string;
}

/**
 * A new attempt of a failed step, through the queue like any step run (its own retries included). The request is
 * recorded on the job as a Queued execution detail with `isRetry: true`, and so is every detail of the new attempt.
 * A channel step sends again although its failed message exists; on success that message becomes the sent one.
 * Later steps that the failure had ended (`shouldStopOnFail`) wait again and continue once the step succeeds.
 * Only a `failed` job can be retried (409 otherwise); a job outside the caller's environment is a 404.
 */
export async function retryFailedJob(deps: Deps, input: RetryFailedJobInput): Promise<StoredJob> {
  const { environmentId } = input.caller;
  const job = isRecordId(input.jobId) && isRecordId(input.notificationId) ? await deps.store.jobs.get(environmentId, input.jobId) : undefined;
  if (!job || job._notificationId !== input.notificationId) throw NotFoundError.entity('Job', input.jobId);

  const retries = manualRetriesOf(job) + 1;
  const retried = await deps.store.transaction(async (store) => {
    await store.lockKey(`job-retry:${job._id}`);
    const current = await store.jobs.get(environmentId, job._id);
    if (!current || current.status !== 'failed') {
      throw new ConflictError(`Only a failed step can be retried; this one is ${current?.status ?? 'gone'}`);
    }
    current.step = { ...current.step, metadata: { ...(current.step.metadata ?? {}), manualRetries: retries } };
    await setJobStatus(deps, store, current, 'queued', executionDetail(deps, 'Queued', `Retry ${retries} requested`, { isRetry: true }));
    const stopReason = stoppedByFailureReason(current);
    for (const later of await store.jobs.listForNotification(environmentId, current._notificationId)) {
      const last = later.executionDetails.at(-1);
      if (later.stepIndex <= current.stepIndex || later.status !== 'skipped' || last?.detail !== stopReason) continue;
      await setJobStatus(deps, store, later, 'pending', executionDetail(deps, 'Pending', `Waiting for the retry of step ${current.step.name ?? current.type}`, { isRetry: true }));
    }
    return current;
  });
  await enqueueFollowUps(deps, [{ environmentId, jobId: retried._id, dedupeKey: `${dedupeKeys.step(retried._id)}:retry:${retries}` }]);
  return (await deps.store.jobs.get(environmentId, retried._id)) ?? retried;
}
