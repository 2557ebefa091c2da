import { isoNow } from '../../domain/clock.js';
import { evaluateStepFilters } from '../../domain/step-filters.js';
import { SELF_CONTAINED_STEP_TYPES } from '../../domain/workflow.js';
import type { TemplateContext, TemplateRenderer } from '../../domain/templates.js';
import { DELIVERY_CHANNELS, type DeliveryChannel, type JobStep, type Subscriber } from '../../domain/types.js';
import type { RunStepPayload } from '../../queue/jobs.js';
import { dedupeKeys } from '../../queue/jobs.js';
import type { Store, StoredJob } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import type { StepObservation } from '../../observability/ports.js';
import { decideDelivery } from '../preferences/decide-delivery.js';
import { withDomainEvents } from '../events/record-domain-events.js';
import { messageEvent } from '../../domain/webhooks.js';
import { buildMessage } from './build-message.js';
import type { AttemptedDelivery } from './delivery-error.js';
import {
  TERMINAL_JOB_STATUSES,
  endRemainingSteps,
  enqueueFollowUps,
  executionDetail,
  queueNextStep,
  setJobStatus,
  storedJobsOf,
  type FollowUp,
} from './job-progress.js';
import type { CustomStepRegistry, LoadedRecords, StepHandlers, StepOutcome, StepRun } from './step-context.js';
import { bridgeStepOf, literalRenderer, prepareBridgeStep } from './bridge-step.js';
import { keepEventText } from '../notifications/keep-event-text.js';

export interface RunJobOptions {
  handlers: StepHandlers;
  customSteps: CustomStepRegistry;
  renderer: TemplateRenderer;
  attempt: number;
  maxAttempts: number;
  /** Records the caller just wrote and still holds; read from the store when absent. */
  loaded?: LoadedRecords;
  /** Filled in with what the run found (step type, workflow, provider, outcome) for the caller's span and metrics. */
  observation?: StepObservation;
}

/** How many times a person asked for this job to run again after it failed (retryFailedJob). */
export function manualRetriesOf(job: { step: JobStep }): number {
  const value = job.step.metadata?.manualRetries;
  return typeof value === 'number' ? value : 0;
}

/** The reason recorded on later steps when a failed step with `shouldStopOnFail` ends the workflow. */
export function stoppedByFailureReason(job: StoredJob): string {
  return `Step skipped: step ${job.step.name ?? job.type} failed and stops the workflow`;
}

/** Steps whose decision reads other jobs and then writes: run inside one transaction. */
export const TRANSACTIONAL_STEPS: ReadonlySet<string> = new Set(['digest', 'throttle']);

/**
 * Runs one step of one notification event. Idempotent: a job that already ended only makes sure the next
 * step is queued; a delayed job that runs early goes back to wait; a channel step never creates a second
 * message (messages are unique per job). Provider errors propagate to the dispatcher, which decides retry or fail.
 */
export async function runJob(deps: Deps, payload: RunStepPayload, options: RunJobOptions): Promise<void> {
  const job = options.loaded?.job._id === payload.jobId ? options.loaded.job : await deps.store.jobs.get(payload.environmentId, payload.jobId);
  if (!job) return;
  observe(options, job, { outcome: job.status });
  if (TERMINAL_JOB_STATUSES.has(job.status)) {
    await enqueueFollowUps(deps, await queueNextStep(deps, deps.store, job));
    return;
  }
  if (job.status === 'delayed') {
    const resumeAt = resumeAtOf(job.step);
    if (resumeAt !== undefined && resumeAt > deps.clock.now()) {
      await enqueueFollowUps(deps, [{ environmentId: job._environmentId, jobId: job._id, dedupeKey: dedupeKeys.resume(job._id), runAt: resumeAt }]);
      return;
    }
  }
  // Code-first steps: the app's bridge computes the content first, outside any transaction (it is an HTTP call).
  const bridged = await prepareBridgeStep(deps, job, options.loaded?.job === job ? options.loaded : undefined);
  const execute = async (store: Store): Promise<FollowUp[]> => {
    // Digest and throttle decide from the other jobs of their group: one worker at a time per group.
    if (TRANSACTIONAL_STEPS.has(job.type) && job.digestGroup) await store.lockKey(`job-group:${job._environmentId}:${job.digestGroup}`);
    const run = await loadRun(deps, store, job, options);
    if (!run) {
      observe(options, job, { outcome: 'failed' });
      await setJobStatus(deps, store, job, 'failed', executionDetail(deps, 'Failed', 'The event or its subscriber no longer exists'));
      return [];
    }
    if (bridged?.kind === 'outcome') return applyOutcome(run, bridged.outcome);
    if (bridged?.kind === 'controls') {
      run.controls = bridged.controls;
      run.renderer = literalRenderer;
      job.overrides = bridged.overrides;
    }
    // A channel step that was held for the subscriber's schedule is checked again when it resumes (the subscriber
    // may have opted out or changed the schedule meanwhile); other resumed steps (delay, digest) continue.
    const gated = run.resumed && !isChannelStep(job.type) ? undefined : await gate(run);
    // `running` is recorded for steps that wait on the outside world; a self-contained step goes straight to its end.
    if (!gated && !run.resumed && !SELF_CONTAINED_STEP_TYPES.has(job.type)) await setJobStatus(deps, store, job, 'running');
    const outcome = gated ?? (await options.handlers[job.type as keyof StepHandlers](run));
    observe(options, job, { workflowId: workflowIdOf(run), outcome: outcome.status, providerId: 'providerId' in outcome ? outcome.providerId : undefined });
    return applyOutcome(run, outcome);
  };
  const followUps = TRANSACTIONAL_STEPS.has(job.type) ? await deps.store.transaction(execute) : await execute(deps.store);
  await enqueueFollowUps(deps, followUps);
  if (followUps.length === 0) await keepEventText(deps, job);
}

/**
 * Ends a job that failed for good (a non-retryable provider error, or attempts used up): channel steps get
 * their message with status `error`, showing the content as rendered for the subscriber; then the workflow
 * moves on, or stops when the step says so.
 */
export async function failJob(
  deps: Deps,
  payload: RunStepPayload,
  failure: { message: string; raw?: string; providerId?: string; attempted?: AttemptedDelivery },
  options: RunJobOptions,
): Promise<void> {
  const job = await deps.store.jobs.get(payload.environmentId, payload.jobId);
  if (!job || TERMINAL_JOB_STATUSES.has(job.status)) return;
  observe(options, job, { outcome: 'failed', providerId: failure.providerId });
  const run = await loadRun(deps, deps.store, job, options);
  if (!run) {
    await setJobStatus(deps, deps.store, job, 'failed', executionDetail(deps, 'Failed', failure.message, { raw: failure.raw }));
    return;
  }
  const isChannelStep = (DELIVERY_CHANNELS as readonly string[]).includes(job.type);
  const existing = isChannelStep ? await deps.store.messages.findByJobId(job._environmentId, job._id) : undefined;
  const error = { message: failure.message, code: 'delivery_failed' };
  if (existing?.status === 'error' && manualRetriesOf(job) > 0) {
    // A retried step failed again: its message tells the latest failure.
    const saved = { ...existing, errorText: failure.message, providerId: failure.providerId ?? existing.providerId, updatedAt: isoNow(deps.clock) };
    await withDomainEvents(deps.store, job._environmentId, async (tx, events) => {
      await tx.messages.save(saved);
      events.push(messageEvent('message.failed', saved, { error }));
    });
  }
  // A code-first step whose bridge call failed has no content: nothing was attempted, no message is recorded (an
  // empty in-app error would show in the Inbox); the job's execution details carry the reason.
  const noContent = bridgeStepOf(job) !== undefined && !failure.attempted;
  if (isChannelStep && !existing && !noContent) {
    const message = buildMessage(run, job.type as DeliveryChannel, failure.attempted?.controls ?? (await renderedOrRaw(run)), {
      status: 'error',
      providerId: failure.providerId,
      errorId: 'delivery_failed',
      errorText: failure.message,
      address: failure.attempted?.address,
    });
    const created = await withDomainEvents(deps.store, job._environmentId, async (tx, events) => {
      const result = await tx.messages.create(message);
      if (result.created) events.push(messageEvent('message.failed', message, { error }));
      return result.created;
    });
    // Counted with the message it records: a concurrent run that stored it first counted it.
    if (created) deps.metrics.delivery(job.type, failure.providerId, 'error');
  }
  observe(options, job, { workflowId: workflowIdOf(run) });
  const followUps = await applyOutcome(run, { status: 'failed', detail: failure.message, raw: failure.raw, providerId: failure.providerId });
  await enqueueFollowUps(deps, followUps);
  if (followUps.length === 0) await keepEventText(deps, job);
}

/** The step's controls rendered for the subscriber; the raw controls only when they do not render. */
async function renderedOrRaw(run: StepRun): Promise<Record<string, unknown>> {
  try {
    return await run.renderer.renderControls(run.controls, run.templateContext);
  } catch {
    return run.controls;
  }
}

/** Records a failed attempt that will be retried. */
export async function recordRetry(deps: Deps, payload: RunStepPayload, failure: { message: string; raw?: string; providerId?: string; attempt: number; maxAttempts: number }): Promise<void> {
  const job = await deps.store.jobs.get(payload.environmentId, payload.jobId);
  if (!job || TERMINAL_JOB_STATUSES.has(job.status)) return;
  const text = `Attempt ${failure.attempt} of ${failure.maxAttempts} failed, will retry: ${failure.message}`;
  const isRetry = failure.attempt > 1 || manualRetriesOf(job) > 0;
  await setJobStatus(deps, deps.store, job, 'queued', executionDetail(deps, 'Failed', text, { raw: failure.raw, providerId: failure.providerId, isRetry }));
}

function observe(options: RunJobOptions, job: StoredJob, found: StepObservation): void {
  if (!options.observation) return;
  options.observation.stepType = job.type;
  for (const [key, value] of Object.entries(found)) if (value !== undefined) options.observation[key as keyof StepObservation] = value;
}

function workflowIdOf(run: StepRun): string | undefined {
  return run.workflow?.workflowId ?? run.event.template?.triggers[0]?.identifier;
}

function resumeAtOf(step: JobStep): number | undefined {
  const raw = step.metadata?.resumeAt;
  const at = typeof raw === 'string' ? Date.parse(raw) : NaN;
  return Number.isNaN(at) ? undefined : at;
}

async function loadRun(deps: Deps, store: Store, job: StoredJob, options: RunJobOptions): Promise<StepRun | undefined> {
  const loaded = options.loaded?.job === job ? options.loaded : undefined;
  // Templates and filters must see the subscriber exactly as stored (nulls included): it is read unless the trigger
  // just read it (a subscriber the trigger created or changed is read back).
  const [event, subscriber, workflow] = await Promise.all([
    loaded ? loaded.event : store.notifications.get(job._environmentId, job._notificationId),
    loaded?.subscriber ?? store.subscribers.get(job._environmentId, job._subscriberId),
    loaded ? loaded.workflow : job._templateId ? store.workflows.get(job._environmentId, job._templateId) : Promise.resolve(undefined),
  ]);
  if (!event || !subscriber) return undefined;
  const payload = event.payload ?? job.payload ?? {};
  const subscriberRecord = subscriberForTemplates(subscriber);
  const step = chooseVariant(job.step, { subscriber: subscriberRecord, payload });
  const workflowStep = workflow?.steps.find((candidate) => candidate._id === job.step._id);
  const siblings = storedJobsOf(event.jobs) ?? (await store.jobs.listForNotification(job._environmentId, job._notificationId));
  event.jobs = siblings;
  const templateContext: TemplateContext = {
    payload,
    subscriber: subscriberRecord,
    steps: earlierStepResults(siblings, job, workflow?.steps),
  };
  const actor = await actorOf(store, job, loaded);
  if (actor) templateContext.actor = actor;
  return {
    deps,
    store,
    job,
    event,
    subscriber,
    workflow,
    step,
    controls: (step.controlVariables as Record<string, unknown> | undefined) ?? {},
    templateContext,
    renderer: options.renderer,
    resumed: job.status === 'delayed',
    shouldStopOnFail: workflowStep?.shouldStopOnFail ?? false,
    stepId: workflowStep?.stepId,
    attempt: options.attempt,
    maxAttempts: options.maxAttempts,
    customSteps: options.customSteps,
  };
}

/** Templates and filters read the subscriber by its public fields (subscriberId, firstName, data, ...). */
export function subscriberForTemplates(subscriber: Subscriber): Record<string, unknown> {
  const { _organizationId: _org, _environmentId: _env, channels: _channels, ...rest } = subscriber;
  return { ...rest, id: subscriber._id };
}

function chooseVariant(step: JobStep, sources: { subscriber: Record<string, unknown>; payload: Record<string, unknown> }): JobStep {
  for (const variant of step.variants ?? []) {
    if (evaluateStepFilters(variant.filters, sources).passed) return variant;
  }
  return step;
}

/**
 * Results of earlier steps for templates: the latest digest's events (as `steps.digest` and
 * `steps.<digest stepId>`) and each finished http_request's answer as `steps.<stepId>` = `{ status, body }`
 * (body parsed when it is JSON).
 */
function earlierStepResults(siblings: StoredJob[], job: StoredJob, workflowSteps: Array<{ _id: string; stepId: string }> = []): TemplateContext['steps'] {
  const steps: NonNullable<TemplateContext['steps']> = {};
  const stepIdOf = (sibling: StoredJob) => workflowSteps.find((candidate) => candidate._id === sibling.step._id)?.stepId;
  const earlier = siblings.filter((sibling) => sibling.stepIndex < job.stepIndex).sort((a, b) => a.stepIndex - b.stepIndex);
  for (const sibling of earlier) {
    if (sibling.type === 'digest' && sibling.digest?.events) {
      const events = sibling.digest.events;
      const result = { events, eventCount: events.length };
      steps.digest = result;
      const stepId = stepIdOf(sibling);
      if (stepId) steps[stepId] = result;
    } else if (sibling.type === 'http_request') {
      const stepId = stepIdOf(sibling);
      const response = httpResponseOf(sibling);
      if (stepId && response) steps[stepId] = response;
    }
  }
  return steps;
}

/** The answer an http_request step recorded on its last execution detail (`raw` = `{status, body}`). */
function httpResponseOf(job: StoredJob): { status: number; body: unknown } | undefined {
  const raw = [...job.executionDetails].reverse().find((detail) => detail.raw)?.raw;
  const recorded = raw ? parseJson(raw) : undefined;
  if (!recorded || typeof recorded !== 'object' || typeof (recorded as { status?: unknown }).status !== 'number') return undefined;
  const { status, body } = recorded as { status: number; body?: unknown };
  return { status, body: typeof body === 'string' ? (parseJson(body) ?? body) : body };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The trigger's `actor` (a subscriberId or subscriber object) for templates; events do not store it. */
async function actorOf(store: Store, job: StoredJob, loaded?: LoadedRecords): Promise<Record<string, unknown> | undefined> {
  if (!(DELIVERY_CHANNELS as readonly string[]).includes(job.type) && job.type !== 'http_request') return undefined;
  if (loaded) return actorFrom(loaded.actor);
  const trigger = await store.triggers.findByTransactionId(job._environmentId, job.transactionId);
  return actorFrom(trigger?.request.actor);
}

function actorFrom(actor: unknown): Record<string, unknown> | undefined {
  if (typeof actor === 'string') return { subscriberId: actor };
  return actor && typeof actor === 'object' ? (actor as Record<string, unknown>) : undefined;
}

/**
 * Before running: an inactive step or failing filters skip it; a channel step is then checked against the workflow's
 * and the subscriber's preferences and schedule (decideDelivery): skipped, held until the schedule opens, or run.
 */
async function gate(run: StepRun): Promise<StepOutcome | undefined> {
  if (!run.step.active) return { status: 'skipped', detail: 'Step skipped: the step is not active' };
  const filters = evaluateStepFilters(run.step.filters, { subscriber: run.templateContext.subscriber, payload: run.templateContext.payload });
  if (!filters.passed) return { status: 'skipped', detail: `Step skipped: filters did not match (${filters.reason})` };
  if (!isChannelStep(run.job.type) || !run.workflow) return undefined;
  const decision = await decideDelivery(run.deps, run.store, {
    environmentId: run.job._environmentId,
    subscriber: run.subscriber,
    workflow: run.workflow,
    channel: run.job.type,
  });
  if (decision.action === 'skip') return { status: 'skipped', detail: decision.detail };
  if (decision.action === 'defer') return { status: 'delayed', detail: decision.detail, resumeAt: decision.until };
  return undefined;
}

function isChannelStep(type: string): type is DeliveryChannel {
  return (DELIVERY_CHANNELS as readonly string[]).includes(type);
}

async function applyOutcome(run: StepRun, outcome: StepOutcome): Promise<FollowUp[]> {
  const { deps, store, job, event } = run;
  const siblings = storedJobsOf(event.jobs);
  if ('providerId' in outcome && outcome.providerId) job.providerId = outcome.providerId;
  const detailExtra = {
    raw: 'raw' in outcome ? outcome.raw : undefined,
    providerId: 'providerId' in outcome ? outcome.providerId : undefined,
    isRetry: run.attempt > 1 || manualRetriesOf(job) > 0,
  };
  switch (outcome.status) {
    case 'completed': {
      if (outcome.digest) job.digest = outcome.digest;
      await setJobStatus(deps, store, job, 'completed', executionDetail(deps, outcome.detailStatus ?? 'Success', outcome.detail, detailExtra));
      return queueNextStep(deps, store, job, siblings);
    }
    case 'skipped': {
      await setJobStatus(deps, store, job, 'skipped', executionDetail(deps, outcome.detailStatus ?? 'Success', outcome.detail, detailExtra));
      if (outcome.skipRest) {
        await endRemainingSteps(deps, store, job, siblings, 'skipped', `Step skipped: an earlier step (${job.type}) ended the workflow`);
        return [];
      }
      return queueNextStep(deps, store, job, siblings);
    }
    case 'failed': {
      await setJobStatus(deps, store, job, 'failed', executionDetail(deps, 'Failed', outcome.detail, detailExtra));
      if (run.shouldStopOnFail) {
        await endRemainingSteps(deps, store, job, siblings, 'skipped', stoppedByFailureReason(job));
        return [];
      }
      return queueNextStep(deps, store, job, siblings);
    }
    case 'delayed': {
      if (outcome.digest) job.digest = outcome.digest;
      job.step = { ...job.step, metadata: { ...(job.step.metadata ?? {}), resumeAt: new Date(outcome.resumeAt).toISOString() } };
      await setJobStatus(deps, store, job, 'delayed', executionDetail(deps, 'Pending', outcome.detail));
      return [{ environmentId: job._environmentId, jobId: job._id, dedupeKey: dedupeKeys.resume(job._id), runAt: outcome.resumeAt }];
    }
    case 'merged': {
      await setJobStatus(deps, store, job, 'merged', executionDetail(deps, 'Success', outcome.detail));
      const { jobs: _jobs, ...eventWithoutJobs } = event;
      await store.notifications.save({ ...eventWithoutJobs, _digestedNotificationId: outcome.digestedNotificationId, updatedAt: isoNow(deps.clock) });
      await endRemainingSteps(deps, store, job, siblings, 'merged', `Merged into the digest of event ${outcome.digestedNotificationId}`);
      return [];
    }
  }
}
