import { createHash } from 'node:crypto';
import { isoNow } from '../../domain/clock.js';
import { contextKeysFromContext } from '../../domain/context-keys.js';
import { isRecordId, newId } from '../../domain/ids.js';
import { toJobStep, toNotificationEventTemplate } from '../../domain/workflow-shape.js';
import type { Integration, NotificationEvent, NotificationEventSubscriber, StepType } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import { dedupeKeys, type ProcessTriggerPayload } from '../../queue/jobs.js';
import type { StoredJob, TriggerRecord } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import type { TriggerRequest } from '../events/accept-trigger.js';
import { enqueueFollowUps, executionDetail, storedJobsOf, type FollowUp } from './job-progress.js';
import { resolveRecipients, type Recipient } from './resolve-recipients.js';
import type { LoadedRecords } from './step-context.js';
import { digestMetadataOf, stepGroupOf } from './step-metadata.js';
import { subscriberForTemplates, TRANSACTIONAL_STEPS } from './run-job.js';
import { holdEffects } from './held-effects.js';
import { plannedProviderId, sendsThroughProvider } from './select-integration.js';

export interface ProcessTriggerOptions {
  /**
   * Runs an event's first step here and now, with the records just written, instead of queueing it; returns false
   * when it did not (the step is then queued). Used for a single recipient only: a fan-out keeps its first steps
   * parallel on the queue.
   */
  runFirstStep?: (followUp: FollowUp, loaded: LoadedRecords, deps: Deps) => Promise<boolean>;
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
  // The cache's own frozen copy: the engine only reads the workflow (a copy per trigger was 1.6 % of the drain's CPU).
  const workflow = await deps.store.workflows.get(trigger.environmentId, trigger.workflowId, { shared: true });
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
  // Read once per trigger, and only when a step sends through a provider: its jobs name the provider up front.
  const integrations = workflow.steps.some((step) => sendsThroughProvider(step.type))
    ? await deps.store.integrations.list(trigger.environmentId, { activeOnly: true })
    : [];
  const [firstStep] = workflow.steps;
  const firstStepRunsHere = options.runFirstStep && firstStep && !TRANSACTIONAL_STEPS.has(firstStep.type) ? options.runFirstStep : undefined;
  if (firstStepRunsHere && addressesOneSubscriber(request)) {
    // Its recipient is resolved with the event's write, so a subscriber it creates is written in the same commit.
    await createAndRunFirstStep(deps, { trigger, workflow, contextKeys, integrations }, firstStepRunsHere);
    return;
  }
  const recipients = await resolveRecipients(deps, trigger);
  const runFirstStep = recipients.length === 1 ? options.runFirstStep : undefined;
  if (runFirstStep && firstStepRunsHere) {
    await createAndRunFirstStep(deps, { trigger, workflow, recipient: recipients[0]!, contextKeys, integrations }, runFirstStep);
    return;
  }
  for (const recipient of recipients) {
    const created = await createEvent(deps, { trigger, workflow, recipient, contextKeys, integrations });
    const [first] = created.followUps;
    // Before the trigger is marked processed: a crash in the step reruns this job, which finds the event and its
    // first step still queued or running and runs it again (steps are idempotent).
    const ran = first && created.loaded && first.runAt === undefined && runFirstStep ? await runFirstStep(first, created.loaded, deps) : false;
    await enqueueFollowUps(deps, ran ? created.followUps.slice(1) : created.followUps);
  }
  await deps.store.triggers.setState(trigger.environmentId, trigger._id, 'processed');
}

/**
 * One recipient, its first step run here: the event, its jobs and what the step records are written together
 * (Store.batch: one statement on PostgreSQL, one synchronous block on SQLite, each job inserted in the status it reached), with the trigger marked
 * processed in the same write when nothing is left to queue. Realtime events, queue adds and counts (metrics) the step
 * asked for wait until the write is durable. A crash before it leaves the trigger `accepted` and nothing of its event written (the
 * rerun starts again); after it, the event is complete or its next step is queued in the database, and a rerun of this
 * job (the trigger is still `accepted` then) queues the event's first step again, whose run queues the next one.
 */
async function createAndRunFirstStep(
  deps: Deps,
  input: { trigger: TriggerRecord; workflow: Workflow; recipient?: Recipient; contextKeys: string[]; integrations: Integration[] },
  runFirstStep: NonNullable<ProcessTriggerOptions['runFirstStep']>,
): Promise<void> {
  const { trigger } = input;
  const attempt = async (recipient: Recipient | undefined, unchecked: (() => void) | undefined) => {
    const held = holdEffects(deps);
    let processed = false;
    const remaining = await deps.store.batch(async (store) => {
      // Unheld realtime: a subscriber's profile update is written at once (Store.batch holds only its creation).
      const [resolved] = recipient ? [recipient] : await resolveRecipients({ ...deps, store }, trigger);
      const stepDeps = held.depsFor(store);
      const created = await createEvent(stepDeps, { ...input, recipient: resolved!, requeueEndedFirstStep: true, unchecked });
      const [first] = created.followUps;
      const ran = first && created.loaded && first.runAt === undefined ? await runFirstStep(first, created.loaded, stepDeps) : false;
      const rest = ran ? created.followUps.slice(1) : created.followUps;
      if (rest.length === 0 && !held.queueAddsHeld()) {
        await store.triggers.setState(trigger.environmentId, trigger._id, 'processed');
        processed = true;
      }
      return rest;
    });
    return { held, remaining, processed };
  };
  // Where the held write can refuse a taken event id itself (PostgreSQL), the first attempt does not look the id up:
  // the event is new on every run but a rerun's (a crash after the write) and a rare id collision, whose write then
  // fails as a whole and is made again below, looked up (one round trip less per delivery, BENCHMARKS.md session 18).
  let unchecked = false;
  let done: Awaited<ReturnType<typeof attempt>>;
  try {
    done = await attempt(input.recipient, () => (unchecked = true));
  } catch (error) {
    if (input.recipient && !unchecked) throw error;
    // Nothing was written. The subscriber it was creating may have been created meanwhile by another trigger (the
    // write failed on its subscriberId): resolved first this time, so found. Or the event id was taken (a rerun's own
    // event, or another's): looked up this time.
    const [recipient] = input.recipient ? [input.recipient] : await resolveRecipients(deps, trigger);
    done = await attempt(recipient, undefined);
  }
  const { held, remaining, processed } = done;
  await held.release();
  await enqueueFollowUps(deps, remaining);
  if (!processed) await deps.store.triggers.setState(trigger.environmentId, trigger._id, 'processed');
}

/** Whether the trigger names exactly one subscriber (by id or as an object): no topic, no broadcast. */
function addressesOneSubscriber(request: TriggerRequest): boolean {
  if (request.broadcast) return false;
  const entries = Array.isArray(request.to) ? request.to : request.to === undefined ? [] : [request.to];
  if (entries.length !== 1) return false;
  const [entry] = entries;
  return typeof entry === 'string' || !('type' in entry! && entry.type === 'Topic');
}

/**
 * The event id for (trigger, subscriber), the same on every rerun. It starts with the trigger id's seconds and
 * counter, so the events of successive triggers sort in the order the triggers were accepted and every index keyed by
 * notification id (the events', and their jobs', execution details' and messages') grows at its end: with a hash
 * there, each new event dirtied a different page of each of them, a quarter of the pages a trigger wrote
 * (BENCHMARKS.md). The rest is a hash of trigger and subscriber; `probe` > 0 picks another when one is taken by another
 * subscriber (40 bits: a broadcast to a million subscribers meets a few, see `placeEvent`).
 */
export function eventIdFor(trigger: Pick<TriggerRecord, '_id' | 'createdAt'>, subscriberInternalId: string, probe = 0): string {
  if (!isRecordId(trigger._id)) return legacyEventIdFor(trigger, subscriberInternalId, probe);
  const source = probe === 0 ? `${trigger._id}:${subscriberInternalId}` : `${trigger._id}:${subscriberInternalId}:${probe}`;
  return trigger._id.slice(0, 14) + createHash('sha256').update(source).digest('hex').slice(0, 10);
}

/** The event id of earlier versions (seconds, then a hash): still looked up, for triggers they began processing. */
function legacyEventIdFor(trigger: Pick<TriggerRecord, '_id' | 'createdAt'>, subscriberInternalId: string, probe = 0): string {
  const seconds = Math.floor(Date.parse(trigger.createdAt) / 1000).toString(16).padStart(8, '0');
  const source = probe === 0 ? `${trigger._id}:${subscriberInternalId}` : `${trigger._id}:${subscriberInternalId}:${probe}`;
  return seconds + createHash('sha256').update(source).digest('hex').slice(0, 16);
}

/** Ids tried for one subscriber before giving up: each further one is taken with a chance of about 1 in 2^40 / n. */
const MAX_EVENT_ID_PROBES = 16;

/**
 * The subscriber's event of this trigger if a run already made it, otherwise a free id for it. An id taken by
 * another subscriber (or, across processes, another trigger) moves on to the next probe; a rerun walks the same
 * probes and so finds its own event again.
 */
async function placeEvent(deps: Deps, trigger: TriggerRecord, subscriberInternalId: string): Promise<{ existing: NotificationEvent } | { eventId: string }> {
  const env = trigger.environmentId;
  for (let probe = 0; probe < MAX_EVENT_ID_PROBES; probe++) {
    const eventId = eventIdFor(trigger, subscriberInternalId, probe);
    const candidates = probe === 0 && isRecordId(trigger._id) ? [eventId, legacyEventIdFor(trigger, subscriberInternalId)] : [eventId];
    const owners = await deps.store.notifications.findOwners(env, candidates);
    const ours = owners.find((owner) => owner.subscriberId === subscriberInternalId && owner.transactionId === trigger.transactionId);
    if (ours) {
      const existing = await deps.store.notifications.get(env, ours.id);
      if (existing) return { existing };
    }
    if (!owners.some((owner) => owner.id === eventId)) return { eventId };
  }
  throw new Error(`no free notification id for subscriber ${subscriberInternalId} of trigger ${trigger._id}`);
}

/** The event's follow-ups (its first step to queue), and the records just written when the event is new. */
interface CreatedEvent {
  followUps: FollowUp[];
  loaded?: LoadedRecords;
}

async function createEvent(
  deps: Deps,
  input: {
    trigger: TriggerRecord;
    workflow: Workflow;
    recipient: Recipient;
    contextKeys: string[];
    integrations: Integration[];
    requeueEndedFirstStep?: boolean;
    /**
     * Called when the event's id is not looked up but written as new (probe 0) with a write that fails if that id, or
     * the legacy one, is taken (`createWithJobsIfIdsFree`, where the store has it): the caller then runs it again
     * without this.
     */
    unchecked?: () => void;
  },
): Promise<CreatedEvent> {
  const { trigger, workflow, recipient, contextKeys, integrations } = input;
  const { subscriber } = recipient;
  const env = trigger.environmentId;
  const createIfFree = input.unchecked ? deps.store.notifications.createWithJobsIfIdsFree?.bind(deps.store.notifications) : undefined;
  const placed: Awaited<ReturnType<typeof placeEvent>> = createIfFree
    ? { eventId: eventIdFor(trigger, subscriber._id) }
    : await placeEvent(deps, trigger, subscriber._id);
  if ('existing' in placed) {
    // After a first step run with the trigger, one that already ended is queued too: its rerun only queues the next
    // step, which a crash between that write and its queue add would otherwise leave unqueued. (Not for fan-outs,
    // whose first steps were queued, not run here: a rerun would queue one no-op job per recipient.)
    const first = storedJobsOf(placed.existing.jobs)?.find(
      (job) => job.stepIndex === 0 && (job.status === 'queued' || job.status === 'running' || (input.requeueEndedFirstStep === true && job.status !== 'pending')),
    );
    return { followUps: first ? [{ environmentId: env, jobId: first._id, dedupeKey: dedupeKeys.step(first._id) }] : [] };
  }
  const { eventId } = placed;
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
  const filterSources = { subscriber: subscriberForTemplates(subscriber), payload };
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
      providerId: plannedProviderId(step.type, integrations, filterSources, overrides),
      digestGroup: stepGroupOf(step, { workflowId: workflow._id, subscriberId: subscriber._id }, payload),
      executionDetails: details,
      createdAt: now,
      updatedAt: now,
    };
    if (step.type === 'digest') job.digest = digestMetadataOf(step.controls);
    return job;
  });
  if (createIfFree) {
    // The ids placeEvent would have looked up: probe 0 (the event's own, refused by the primary key) and the legacy one.
    input.unchecked!();
    await createIfFree(event, jobs, isRecordId(trigger._id) ? [legacyEventIdFor(trigger, subscriber._id)] : []);
  } else await deps.store.notifications.createWithJobs(event, jobs);
  if (jobs.length === 0) return { followUps: [] };
  return {
    followUps: [{ environmentId: env, jobId: jobs[0]._id, dedupeKey: dedupeKeys.step(jobs[0]._id) }],
    loaded: { job: jobs[0], event: { ...event, jobs }, workflow, subscriber: recipient.asStored ? subscriber : recipient.stored, actor: request.actor },
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
