import { createHash } from 'node:crypto';
import { isoNow } from '../../domain/clock.js';
import { contextKeysFromContext } from '../../domain/context-keys.js';
import { newId } from '../../domain/ids.js';
import { toJobStep, toNotificationEventTemplate } from '../../domain/workflow-shape.js';
import type { NotificationEvent, NotificationEventSubscriber, StepType } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import { dedupeKeys, type ProcessTriggerPayload } from '../../queue/jobs.js';
import type { StoredJob, TriggerRecord } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import type { TriggerRequest } from '../events/accept-trigger.js';
import { enqueueFollowUps, executionDetail, storedJobsOf, type FollowUp } from './job-progress.js';
import { resolveRecipients, type Recipient } from './resolve-recipients.js';
import type { LoadedRecords } from './step-context.js';
import { digestMetadataOf, stepGroupOf } from './step-metadata.js';

export interface ProcessTriggerOptions {
  /**
   * Runs an event's first step here and now, with the records just written, instead of queueing it; returns false
   * when it did not (the step is then queued). Used for a single recipient only: a fan-out keeps its first steps
   * parallel on the queue.
   */
  runFirstStep?: (followUp: FollowUp, loaded: LoadedRecords) => Promise<boolean>;
}

/**
 * Turns an accepted trigger into one notification event per recipient, each with one job per workflow step,
 * and queues every event's first step (or runs it here, see `runFirstStep`). Safe to run again after a crash:
 * event ids are derived from the trigger and the subscriber, so a rerun finds the events it made and only
 * re-queues their first step.
 */
export async function processTrigger(deps: Deps, payload: ProcessTriggerPayload, options: ProcessTriggerOptions = {}): Promise<void> {
  const trigger = await deps.store.triggers.get(payload.environmentId, payload.triggerId);
  if (!trigger || trigger.state !== 'accepted') return;
  const workflow = await deps.store.workflows.get(trigger.environmentId, trigger.workflowId);
  if (!workflow) {
    await deps.store.triggers.setState(trigger.environmentId, trigger._id, 'failed', `workflow ${trigger.workflowId} no longer exists`);
    return;
  }
  const request = trigger.request as TriggerRequest;
  let contextKeys: string[] = [];
  try {
    contextKeys = contextKeysFromContext(request.context);
  } catch {
    // validated at accept time; a context that no longer parses simply yields no keys
  }
  const recipients = await resolveRecipients(deps, trigger);
  const runFirstStep = recipients.length === 1 ? options.runFirstStep : undefined;
  for (const recipient of recipients) {
    const created = await createEvent(deps, { trigger, workflow, recipient, contextKeys });
    const [first] = created.followUps;
    // Before the trigger is marked processed: a crash in the step reruns this job, which finds the event and its
    // first step still queued or running and runs it again (steps are idempotent).
    const ran = first && created.loaded && first.runAt === undefined && runFirstStep ? await runFirstStep(first, created.loaded) : false;
    await enqueueFollowUps(deps, ran ? created.followUps.slice(1) : created.followUps);
  }
  await deps.store.triggers.setState(trigger.environmentId, trigger._id, 'processed');
}

/** The event id for (trigger, subscriber): time-ordered like every id, and the same on every rerun. */
export function eventIdFor(trigger: Pick<TriggerRecord, '_id' | 'createdAt'>, subscriberInternalId: string): string {
  const seconds = Math.floor(Date.parse(trigger.createdAt) / 1000).toString(16).padStart(8, '0');
  return seconds + createHash('sha256').update(`${trigger._id}:${subscriberInternalId}`).digest('hex').slice(0, 16);
}

/** The event's follow-ups (its first step to queue), and the records just written when the event is new. */
interface CreatedEvent {
  followUps: FollowUp[];
  loaded?: LoadedRecords;
}

async function createEvent(
  deps: Deps,
  input: { trigger: TriggerRecord; workflow: Workflow; recipient: Recipient; contextKeys: string[] },
): Promise<CreatedEvent> {
  const { trigger, workflow, recipient, contextKeys } = input;
  const { subscriber } = recipient;
  const env = trigger.environmentId;
  const eventId = eventIdFor(trigger, subscriber._id);
  const existing = await deps.store.notifications.get(env, eventId);
  if (existing) {
    const first = storedJobsOf(existing.jobs)?.find((job) => job.stepIndex === 0 && (job.status === 'queued' || job.status === 'running'));
    return { followUps: first ? [{ environmentId: env, jobId: first._id, dedupeKey: dedupeKeys.step(first._id) }] : [] };
  }
  const request = trigger.request as TriggerRequest;
  const payload = request.payload ?? {};
  const overrides = request.overrides ?? {};
  const nowMs = deps.clock.now();
  const now = isoNow(deps.clock);
  const event: NotificationEvent = {
    _id: eventId,
    _environmentId: env,
    _organizationId: trigger.organizationId,
    _subscriberId: subscriber._id,
    transactionId: trigger.transactionId,
    _templateId: workflow._id,
    createdAt: now,
    updatedAt: now,
    channels: [...new Set<StepType>(workflow.steps.map((step) => step.type))],
    subscriber: eventSubscriber(recipient),
    template: toNotificationEventTemplate(workflow),
    payload,
    controls: {},
    to: recipient.to,
    tags: [...workflow.tags],
    topics: recipient.topics,
    severity: workflow.severity,
    critical: workflow.critical,
    contextKeys,
  };
  const jobs: StoredJob[] = workflow.steps.map((step, index) => {
    const details = [executionDetail(deps, 'Pending', 'Step created')];
    if (index === 0) details.push(executionDetail(deps, 'Queued', 'Step queued'));
    const job: StoredJob = {
      _id: newId(nowMs),
      _environmentId: env,
      _organizationId: trigger.organizationId,
      _notificationId: eventId,
      _subscriberId: subscriber._id,
      transactionId: trigger.transactionId,
      _templateId: workflow._id,
      stepIndex: index,
      type: step.type,
      status: index === 0 ? 'queued' : 'pending',
      step: toJobStep(step),
      overrides,
      payload,
      providerId: step.type === 'in_app' ? 'novu' : '',
      digestGroup: stepGroupOf(step, { workflowId: workflow._id, subscriberId: subscriber._id }, payload),
      executionDetails: details,
      createdAt: now,
      updatedAt: now,
    };
    if (step.type === 'digest') job.digest = digestMetadataOf(step.controls);
    return job;
  });
  await deps.store.transaction(async (store) => {
    await store.notifications.create(event);
    if (jobs.length > 0) await store.jobs.createMany(jobs);
  });
  if (jobs.length === 0) return { followUps: [] };
  return {
    followUps: [{ environmentId: env, jobId: jobs[0]._id, dedupeKey: dedupeKeys.step(jobs[0]._id) }],
    loaded: { job: jobs[0], event: { ...event, jobs }, workflow, actor: request.actor },
  };
}

function eventSubscriber({ subscriber }: Recipient): NotificationEventSubscriber {
  const summary: NotificationEventSubscriber = { subscriberId: subscriber.subscriberId, _id: subscriber._id };
  for (const field of ['firstName', 'lastName', 'email', 'phone'] as const) {
    const value = subscriber[field];
    if (typeof value === 'string') summary[field] = value;
  }
  return summary;
}
