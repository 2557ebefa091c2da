import type { TemplateContext, TemplateRenderer } from '../../domain/templates.js';
import type { DigestMetadata, JobStep, NotificationEvent, Subscriber } from '../../domain/types.js';
import type { Workflow, WorkflowStepType } from '../../domain/workflow.js';
import type { Store, StoredJob } from '../../store/ports.js';
import type { Deps } from '../deps.js';

/** What a step handler sees: the job being run and everything it needs, loaded once by run-job. */
export interface StepRun {
  deps: Deps;
  /** The store to use: a transaction's for digest and throttle steps (their decisions read then write). */
  store: Store;
  job: StoredJob;
  event: NotificationEvent;
  subscriber: Subscriber;
  /** Undefined when the workflow was deleted after the trigger; the job's step snapshot still runs. */
  workflow?: Workflow;
  /** The step to run: the job's step, or the first variant whose filters passed. */
  step: JobStep;
  /** The step's control values as snapshotted at trigger time (not yet rendered). */
  controls: Record<string, unknown>;
  /** payload, subscriber, actor and earlier steps' results (the digest's events). */
  templateContext: TemplateContext;
  renderer: TemplateRenderer;
  /** True when a delay/digest job runs again after its wait. */
  resumed: boolean;
  /** Whether the step stops the workflow when it fails (from the workflow; false once it is deleted). */
  shouldStopOnFail: boolean;
  /** The step's slug in the workflow (`stepId`), for `steps.<stepId>` in templates. */
  stepId?: string;
  attempt: number;
  maxAttempts: number;
  customSteps: CustomStepRegistry;
}

/**
 * The records a step run reads, when the caller already holds them as they were just written (the worker runs an
 * event's first step right after creating it): run-job then skips reading them back.
 */
export interface LoadedRecords {
  job: StoredJob;
  /** With its jobs (and their execution details) as stored. */
  event: NotificationEvent;
  workflow: Workflow;
  /** The event's subscriber as the store returned it moments ago, when the caller read it (absent: read it). */
  subscriber?: Subscriber;
  /** The trigger's `actor`, as the request carried it. */
  actor?: unknown;
}

/** How a step ended; run-job records it (status, execution detail) and moves the workflow on. */
export type StepOutcome =
  | { status: 'completed'; detail: string; detailStatus?: 'Success' | 'Warning'; raw?: string; providerId?: string; digest?: DigestMetadata }
  | { status: 'skipped'; detail: string; detailStatus?: 'Success' | 'Warning'; providerId?: string; skipRest?: boolean }
  | { status: 'failed'; detail: string; raw?: string; providerId?: string }
  | { status: 'delayed'; detail: string; resumeAt: number; digest?: DigestMetadata }
  | { status: 'merged'; detail: string; digestedNotificationId: string };

export type StepHandler = (run: StepRun) => Promise<StepOutcome>;
export type StepHandlers = Record<WorkflowStepType, StepHandler>;

/** What a custom step handler gets and may return (its result is recorded on the execution detail). */
export interface CustomStepInput {
  payload: Record<string, unknown>;
  subscriber: Subscriber;
  controls: Record<string, unknown>;
  transactionId: string;
  environmentId: string;
}

export type CustomStepHandler = (input: CustomStepInput) => Promise<Record<string, unknown> | void>;

/** Custom steps are code: registered by name when the worker is built; a step names its handler in `controls.handler`. */
export interface CustomStepRegistry {
  get(name: string): CustomStepHandler | undefined;
}

export const emptyCustomStepRegistry: CustomStepRegistry = { get: () => undefined };
