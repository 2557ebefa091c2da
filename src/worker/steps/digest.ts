import { computeDigestWindow } from '../../domain/digest-window.js';
import type { DigestMetadata } from '../../domain/types.js';
import { digestMetadataOf } from '../../usecases/engine/step-metadata.js';
import type { StepOutcome, StepRun } from '../../usecases/engine/step-context.js';

/**
 * Digest (runs in a transaction): the first event of a group opens a window and waits for it to close; events
 * arriving while it is open add their payload to it and end `merged`. When the window closes the opener
 * completes with every payload in `digest.events`, which the next step reads as `steps.digest.events`.
 */
export async function digestStep(run: StepRun): Promise<StepOutcome> {
  const { job, store } = run;
  const payload = run.templateContext.payload;
  if (run.resumed) {
    const events = job.digest?.events ?? [payload];
    return { status: 'completed', detail: `Digest closed with ${events.length} event(s)`, digest: { ...(job.digest ?? digestMetadataOf(run.controls)), events } };
  }
  const metadata: DigestMetadata = job.digest ?? digestMetadataOf(run.controls);
  const group = job.digestGroup;
  if (!group) return { status: 'completed', detail: 'Digest of a single event', digest: { ...metadata, events: [payload] } };

  const open = (await store.triggers.listJobsInGroup(job._environmentId, group, ['delayed'])).find((ref) => ref._id !== job._id);
  if (open) {
    const leader = await store.jobs.get(job._environmentId, open._id);
    if (leader) {
      const events = [...(leader.digest?.events ?? []), payload];
      leader.digest = { ...(leader.digest ?? metadata), events };
      await store.jobs.save(leader);
      return { status: 'merged', detail: `Merged into the digest of event ${leader._notificationId}`, digestedNotificationId: leader._notificationId };
    }
  }

  const earlier = (await store.triggers.listJobsInGroup(job._environmentId, group, ['completed', 'merged', 'delayed', 'running', 'queued']))
    .filter((ref) => ref._id !== job._id && ref.createdAt <= job.createdAt)
    .map((ref) => Date.parse(ref.createdAt));
  const window = computeDigestWindow(metadata, {
    nowMs: run.deps.clock.now(),
    lastEventAtMs: earlier.length > 0 ? Math.max(...earlier) : undefined,
    timezone: run.subscriber.timezone,
  });
  if ('error' in window) return { status: 'failed', detail: window.error };
  if (window.immediate) {
    return { status: 'completed', detail: 'No digest window is open for this event: sent at once', digest: { ...metadata, events: [payload] } };
  }
  return {
    status: 'delayed',
    resumeAt: window.windowEndsAt,
    detail: `Digesting events until ${new Date(window.windowEndsAt).toISOString()}`,
    digest: { ...metadata, events: [payload] },
  };
}
