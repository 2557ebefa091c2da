/**
 * The queue's job names and payloads: the only contract between the API and the worker. Payloads carry ids
 * only; the worker reloads everything else, so a job enqueued before an upgrade still runs after it.
 */
export const JOB_NAMES = {
  /** Expands an accepted trigger into one notification event per recipient, with its jobs. */
  processTrigger: 'process-trigger',
  /** Runs one workflow step (one row of the jobs table). */
  runStep: 'run-step',
  /** Returns a snoozed in-app message to the Inbox when its snooze ends. */
  endSnooze: 'end-snooze',
  /** Makes one outbound webhook attempt (one row of webhook_attempts). */
  deliverWebhook: 'deliver-webhook',
} as const;

export type JobName = (typeof JOB_NAMES)[keyof typeof JOB_NAMES];

/**
 * Every payload may carry the W3C `traceparent` of the span that enqueued it (when tracing is on), so the worker's
 * spans join the trace of the request that caused them, in another process too. Optional: older jobs have none.
 */
export interface TraceCarrier {
  traceparent?: string;
}

export interface ProcessTriggerPayload extends TraceCarrier {
  environmentId: string;
  triggerId: string;
}

export interface RunStepPayload extends TraceCarrier {
  environmentId: string;
  jobId: string;
}

/** The payload with the active span's traceparent when there is one (the key is left out otherwise). */
export function withTraceparent<P extends TraceCarrier>(payload: P, traceparent: string | undefined): P {
  return traceparent === undefined ? payload : { ...payload, traceparent };
}

export interface EndSnoozePayload {
  environmentId: string;
  messageId: string;
  /** The snooze this job ends: a message snoozed again (or un-snoozed) meanwhile is left alone. */
  snoozedUntil: string;
}

export interface DeliverWebhookPayload {
  environmentId: string;
  attemptId: string;
}

/** dedupe keys: one queue row per trigger, one per step run (a delay/digest wait is a second run). */
export const dedupeKeys = {
  trigger: (triggerId: string) => `trigger:${triggerId}`,
  step: (jobId: string) => `step:${jobId}`,
  resume: (jobId: string) => `resume:${jobId}`,
  endSnooze: (messageId: string, snoozedUntil: string) => `snooze:${messageId}:${snoozedUntil}`,
  webhookAttempt: (attemptId: string) => `webhook:${attemptId}`,
};
