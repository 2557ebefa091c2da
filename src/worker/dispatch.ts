import { createTemplateRenderer, type TemplateRenderer } from '../domain/templates.js';
import { SELF_CONTAINED_STEP_TYPES } from '../domain/workflow.js';
import { ProviderError } from '../providers/ports.js';
import { JOB_NAMES, type DeliverWebhookPayload, type EndSnoozePayload, type ProcessTriggerPayload, type RunStepPayload } from '../queue/jobs.js';
import { PermanentJobError, RetryableJobError, type JobHandler, type QueuedJob } from '../queue/ports.js';
import type { JobStatusLabel, StepObservation } from '../observability/ports.js';
import { DELIVERY_CHANNELS } from '../domain/types.js';
import type { Deps } from '../usecases/deps.js';
import { DeliveryError } from '../usecases/engine/delivery-error.js';
import { endSnooze } from '../usecases/inbox/inbox-notifications.js';
import { deliverWebhook } from '../usecases/webhooks/deliver-webhook.js';
import { processTrigger, type ProcessTriggerOptions } from '../usecases/engine/process-trigger.js';
import { failJob, recordRetry, runJob, type RunJobOptions } from '../usecases/engine/run-job.js';
import { emptyCustomStepRegistry, type CustomStepRegistry, type StepHandlers } from '../usecases/engine/step-context.js';
import { customStep } from './steps/custom.js';
import { delayStep } from './steps/delay.js';
import { deliverChannelStep } from './steps/deliver-channel-step.js';
import { digestStep } from './steps/digest.js';
import { httpRequestStep } from './steps/http-request.js';
import { throttleStep } from './steps/throttle.js';

export const stepHandlers: StepHandlers = {
  in_app: deliverChannelStep,
  email: deliverChannelStep,
  sms: deliverChannelStep,
  chat: deliverChannelStep,
  push: deliverChannelStep,
  delay: delayStep,
  digest: digestStep,
  throttle: throttleStep,
  custom: customStep,
  http_request: httpRequestStep,
};

export interface DispatchOptions {
  customSteps?: CustomStepRegistry;
  renderer?: TemplateRenderer;
}

/**
 * Queue job → use-case. The only place that decides retry or fail: a retryable ProviderError (or an unexpected
 * error) is retried while attempts remain; a non-retryable ProviderError, or the last attempt, fails the step
 * for good (its message is recorded with status `error`) and the workflow moves on.
 */
export function createDispatcher(deps: Deps, options: DispatchOptions = {}): JobHandler {
  const renderer = options.renderer ?? createTemplateRenderer();
  const customSteps = options.customSteps ?? emptyCustomStepRegistry;
  return async (job: QueuedJob) => {
    switch (job.name) {
      case JOB_NAMES.processTrigger:
        return observed(deps, job, {}, () => runProcessTrigger(deps, job, async (followUp, loaded, stepDeps) => {
          // Steps that call providers or user code always go through the queue, where every attempt is recorded.
          if (!SELF_CONTAINED_STEP_TYPES.has(loaded.job.type) || loaded.workflow.origin === 'external') return false;
          const observation: StepObservation = {};
          const runOptions: RunJobOptions = { handlers: stepHandlers, customSteps, renderer, attempt: 1, maxAttempts: deps.config.worker.jobAttempts, loaded, observation };
          try {
            // A step run like a queued one (its own span and count), inside the trigger's job; its count is held with
            // its writes (stepDeps), so a trigger job retried after a failed write counts the step once.
            await observed(stepDeps, undefined, observation, () => runJob(stepDeps, { environmentId: followUp.environmentId, jobId: followUp.jobId }, runOptions));
            return true;
          } catch (error) {
            // Queued instead: the queue's run records the attempt and decides retry or fail, as for any step.
            deps.logger.warn({ jobId: followUp.jobId, err: error }, 'first step could not run at once; queued');
            return false;
          }
        }));
      case JOB_NAMES.runStep: {
        const observation: StepObservation = {};
        const runOptions: RunJobOptions = { handlers: stepHandlers, customSteps, renderer, attempt: job.attempt, maxAttempts: job.maxAttempts, observation };
        return observed(deps, job, observation, () => runStep(deps, job, runOptions));
      }
      case JOB_NAMES.endSnooze:
        return observed(deps, job, {}, () => endSnooze(deps, job.payload as EndSnoozePayload));
      case JOB_NAMES.deliverWebhook:
        return observed(deps, job, {}, () => deliverWebhook(deps, job.payload as DeliverWebhookPayload));
      default:
        deps.logger.warn({ name: job.name, jobId: job.id }, 'unknown queue job dropped');
    }
  };
}

const STEP_OUTCOMES = new Set<string>(['completed', 'skipped', 'delayed', 'merged', 'failed']);

/**
 * One job (or a step run inside the trigger's job when `job` is undefined) in a span and in `herald_jobs_total` /
 * `herald_job_duration_seconds`. A queued job's span is a child of the traceparent its payload carries, so it joins
 * the trace of the request (or step) that enqueued it, whichever process runs it; the step run inside the trigger's
 * job is a child of that job's span.
 */
async function observed(deps: Deps, job: QueuedJob | undefined, observation: StepObservation, run: () => Promise<void>): Promise<void> {
  const started = performance.now();
  const traceparent = (job?.payload as { traceparent?: unknown } | undefined)?.traceparent;
  const spanOptions = {
    kind: job ? ('consumer' as const) : ('internal' as const),
    attributes: job ? { 'herald.job.name': job.name, 'herald.job.attempt': job.attempt } : {},
    ...(job ? { parent: typeof traceparent === 'string' ? traceparent : undefined } : {}),
  };
  let status: JobStatusLabel = 'completed';
  try {
    await deps.tracing.span(job ? `job ${job.name}` : 'step', spanOptions, async (span) => {
      try {
        await run();
        if (observation.outcome && STEP_OUTCOMES.has(observation.outcome)) status = observation.outcome as JobStatusLabel;
      } catch (error) {
        // A step that failed inside the trigger's job is queued instead: it runs again, as a retry does.
        status = !job || (!(error instanceof PermanentJobError) && job.attempt < job.maxAttempts) ? 'retry' : 'failed';
        throw error;
      } finally {
        span.setAttributes({ 'herald.outcome': status });
        if (observation.stepType) {
          const channel = (DELIVERY_CHANNELS as readonly string[]).includes(observation.stepType) ? observation.stepType : undefined;
          span.updateName(`step ${observation.stepType}`);
          span.setAttributes({
            'herald.workflow.id': observation.workflowId,
            'herald.step.type': observation.stepType,
            'herald.channel': channel,
            'herald.provider.id': observation.providerId,
          });
        }
      }
    });
  } finally {
    deps.metrics.jobFinished(observation.stepType ?? job?.name ?? 'step', status, (performance.now() - started) / 1000);
  }
}

async function runProcessTrigger(deps: Deps, job: QueuedJob, runFirstStep: ProcessTriggerOptions['runFirstStep']): Promise<void> {
  const payload = job.payload as ProcessTriggerPayload;
  try {
    await processTrigger(deps, payload, { runFirstStep });
  } catch (error) {
    if (job.attempt >= job.maxAttempts) {
      await deps.store.triggers.setState(payload.environmentId, payload.triggerId, 'failed', errorText(error));
    }
    throw error;
  }
}

async function runStep(deps: Deps, job: QueuedJob, options: RunJobOptions): Promise<void> {
  const payload = job.payload as RunStepPayload;
  try {
    await runJob(deps, payload, options);
  } catch (error) {
    // A channel step wraps its provider's error with what it attempted (provider, rendered content, address).
    const attempted = error instanceof DeliveryError ? error.attempted : undefined;
    const cause = error instanceof DeliveryError ? error.failure : error;
    const failure = {
      message: errorText(cause),
      raw: cause instanceof ProviderError ? cause.raw : undefined,
      providerId: attempted?.providerId,
    };
    const retryable = cause instanceof ProviderError ? cause.retryable : true;
    if (retryable && job.attempt < job.maxAttempts) {
      await recordRetry(deps, payload, { ...failure, attempt: job.attempt, maxAttempts: job.maxAttempts });
      throw new RetryableJobError(failure.message);
    }
    if (retryable && job.maxAttempts > 1) failure.message = `${failure.message} (gave up after ${job.attempt} attempts)`;
    deps.logger.warn({ jobId: payload.jobId, error: failure.message, attempt: job.attempt }, 'step failed');
    await failJob(deps, payload, { ...failure, attempted }, options);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
