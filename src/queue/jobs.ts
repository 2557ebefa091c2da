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

export interface ProcessTriggerPayload {
  environmentId: string;
  triggerId: string;
}

export interface RunStepPayload {
  environmentId: string;
  jobId: string;
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
