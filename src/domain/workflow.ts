import type { DeliveryChannel, Severity, StepFilter, StepType } from './types.js';

/**
 * A workflow as Herald stores it (Novu v2's model): steps with control values rendered as Liquid
 * templates at run time. The HTTP layer maps it to Novu's WorkflowResponseDto; messages and events
 * carry the spec's Workflow/template shapes derived from it.
 */
export type WorkflowStepType = Exclude<StepType, 'trigger'>;

/**
 * Steps that call nothing outside Herald (no provider, no user code, no HTTP): they finish in one go, so the worker
 * may run such a first step inside the trigger's job and does not record their passing `running` state.
 */
export const SELF_CONTAINED_STEP_TYPES: ReadonlySet<string> = new Set<WorkflowStepType>(['in_app', 'delay', 'digest', 'throttle']);

export interface WorkflowStep {
  /** Internal step id (24 hex), also the JobStep `_id` / `_templateId`. */
  _id: string;
  /** The step's slug, unique within the workflow (`stepId` in Novu v2). */
  stepId: string;
  name: string;
  type: WorkflowStepType;
  active: boolean;
  shouldStopOnFail: boolean;
  /**
   * Control values. Channel steps: subject, body, content, title, cta, primaryAction, ...;
   * delay: { type: 'regular', amount, unit } | { type: 'scheduled', delayPath };
   * digest: { type: 'regular'|'backoff'|'timed', amount, unit, digestKey, backoffAmount, backoffUnit, timed, cron };
   * throttle: { amount, unit, threshold, throttleKey }; http_request: { method, url, headers, body };
   * custom: { handler, ... }.
   */
  controls: Record<string, unknown>;
  filters: StepFilter[];
  /** Steps of `external` workflows: what the bridge's discover said about the step (its code computes the content). */
  bridge?: BridgeStepInfo;
  /** Alternative versions of the step; the first whose filters pass replaces the step. */
  variants?: Array<Omit<WorkflowStep, 'variants'>>;
}

/** A step of a code-first workflow as discovered from its @novu/framework bridge. */
export interface BridgeStepInfo {
  /** The type the framework reported (`tool` and other types Herald runs as `custom`). */
  type: string;
  /** JSON Schema of the step's controls: the dashboard's control form. */
  controlSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  /** The step's options minus functions (skip is code: only the bridge knows it). */
  options: Record<string, unknown>;
  /** Providers the step's code overrides (`providers: { sendgrid: ... }`). */
  providers: string[];
}

export interface Workflow {
  _id: string;
  _environmentId: string;
  _organizationId: string;
  /** The trigger identifier; unique per environment. */
  workflowId: string;
  name: string;
  description: string;
  tags: string[];
  active: boolean;
  draft: boolean;
  critical: boolean;
  severity: Severity;
  /** Channels a subscriber receives by default; a channel set to false is skipped. */
  preferenceSettings: Partial<Record<DeliveryChannel, boolean>>;
  /** `preferences.all.readOnly`: subscribers cannot change this workflow's channels (absent: false). */
  readOnly?: boolean;
  /** JSON Schema the trigger payload is validated against (400 when it fails). */
  payloadSchema?: Record<string, unknown>;
  steps: WorkflowStep[];
  data?: Record<string, unknown>;
  _notificationGroupId: string;
  origin: 'novu-cloud' | 'novu-cloud-v1' | 'external';
  /**
   * External workflows discovered on the fly from a trigger's `bridgeUrl`: the bridge that runs them (synced ones use
   * the environment's bridge).
   */
  bridgeUrl?: string;
  _creatorId: string;
  deleted: boolean;
  /** Set by the soft delete. */
  deletedAt?: string;
  /** The caller's actor id at the soft delete. */
  deletedBy?: string;
  createdAt: string;
  updatedAt: string;
}
