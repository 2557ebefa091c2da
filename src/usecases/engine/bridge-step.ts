import type { BridgeExecuteResult } from '../../bridge/ports.js';
import { bridgeState, controlValuesFor, nextCronAt, type EarlierStep } from '../../domain/bridge-workflow.js';
import type { TemplateRenderer } from '../../domain/templates.js';
import { addTimeUnit, isTimeUnit } from '../../domain/time-units.js';
import type { Workflow, WorkflowStep } from '../../domain/workflow.js';
import type { Store, StoredJob } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { bridgeTargetForWorkflow } from '../bridge/bridge-target.js';
import { executionDetail, storedJobsOf } from './job-progress.js';
import { subscriberForTemplates } from './run-job.js';
import type { LoadedRecords, StepOutcome } from './step-context.js';
import { digestMetadataOf, stepGroupOf } from './step-metadata.js';

/**
 * Steps of external (code-first) workflows: their content is computed by the app's bridge, called once per run of
 * the step, before anything is decided from it. The answer becomes the step's controls (already final: they are not
 * rendered again), or ends the step at once (skipped by code; a custom step's output). Failures are BridgeErrors
 * thrown to the dispatcher: the bridge's 4xx fail the job, 5xx and network errors are retried.
 */
export type BridgePreparation =
  | { kind: 'outcome'; outcome: StepOutcome }
  | { kind: 'controls'; controls: Record<string, unknown>; overrides: Record<string, unknown> };

/** The step's slug and framework type when the job runs a step of an external workflow (set by toJobStep). */
export function bridgeStepOf(job: StoredJob): { stepId: string; type: string } | undefined {
  const metadata = job.step.metadata;
  const stepId = metadata?.bridgeStepId;
  if (typeof stepId !== 'string') return undefined;
  return { stepId, type: typeof metadata?.bridgeType === 'string' ? metadata.bridgeType : job.type };
}

/** Bridge outputs are final content: a renderer that leaves them as they are. */
export const literalRenderer: TemplateRenderer = {
  render: async (template) => template,
  renderControls: async (controls) => ({ ...controls }),
};

/** The execute call for this job, or undefined when the job's step is not a code-first one (or must not call again). */
export async function prepareBridgeStep(deps: Deps, job: StoredJob, loaded?: LoadedRecords): Promise<BridgePreparation | undefined> {
  const bridgeStep = bridgeStepOf(job);
  if (!bridgeStep) return undefined;
  // A delay or digest that waited has its answer already; it only finishes now.
  if (job.status === 'delayed' && ['delay', 'digest', 'throttle'].includes(job.type)) return undefined;
  const store = deps.store;
  const env = job._environmentId;
  const [workflow, event, subscriber, trigger, environment] = await Promise.all([
    loaded?.workflow ?? (job._templateId ? store.workflows.get(env, job._templateId) : undefined),
    loaded?.event ?? store.notifications.get(env, job._notificationId),
    loaded?.subscriber ?? store.subscribers.get(env, job._subscriberId),
    store.triggers.findByTransactionId(env, job.transactionId),
    store.tenancy.getEnvironment(env),
  ]);
  if (!workflow || !event || !subscriber) return undefined;
  const siblings = storedJobsOf(event.jobs) ?? (await store.jobs.listForNotification(env, job._notificationId));
  const target = await bridgeTargetForWorkflow(deps, workflow);
  const stored = await store.bridge.getControls(env, workflow.workflowId, bridgeStep.stepId);
  const request = (trigger?.request ?? {}) as { controls?: unknown; context?: unknown };
  const controls = controlValuesFor(bridgeStep.stepId, stored, request.controls);
  const { __source: _source, ...payload } = (event.payload ?? job.payload ?? {}) as Record<string, unknown>;
  const earlier = await earlierSteps(store, workflow, siblings, job);
  const state = bridgeState(earlier);
  const body = {
    payload,
    controls,
    state,
    subscriber: subscriberForTemplates(subscriber),
    context: request.context && typeof request.context === 'object' ? (request.context as Record<string, unknown>) : {},
    env: environment ? { name: environment.name } : {},
  };
  const { result, call } = await deps.bridge.execute(target, { action: 'execute', workflowId: workflow.workflowId, stepId: bridgeStep.stepId, body });

  // The timeline shows each call: what was asked (not the whole payload) and what the code answered.
  const summary = {
    request: { ...call, workflowId: workflow.workflowId, stepId: bridgeStep.stepId, controls, state: state.map((entry) => ({ stepId: entry.stepId, status: entry.state.status })) },
    response: result,
  };
  const skipped = result.options.skip === true;
  job.step = {
    ...job.step,
    metadata: { ...(job.step.metadata ?? {}), bridgeOutputs: skipped ? {} : result.outputs },
  };
  const workflowStep = workflow.steps.find((candidate) => candidate._id === job.step._id);
  applyScheduling(job, workflowStep, workflow, result, payload);
  await store.jobs.save(
    job,
    executionDetail(deps, 'Success', `Bridge ${call.method} ${call.url} answered ${call.status} in ${call.durationMs} ms${skipped ? ': skip' : ''}`, {
      raw: JSON.stringify(summary),
    }),
  );

  if (skipped) return { kind: 'outcome', outcome: { status: 'skipped', detail: `Step skipped by the workflow's code (skip)` } };
  if (['custom', 'http_request'].includes(job.type) || bridgeStep.type === 'tool') {
    return { kind: 'outcome', outcome: { status: 'completed', detail: `Step ${bridgeStep.stepId} computed by the bridge`, raw: JSON.stringify(result.outputs) } };
  }
  return { kind: 'controls', controls: controlsFromOutputs(job.type, result.outputs, deps.clock.now()), overrides: overridesFromResult(job, result) };
}

/** Delay, digest and throttle steps take their rules from the code's outputs (amount, unit, digestKey, cron). */
function applyScheduling(job: StoredJob, step: WorkflowStep | undefined, workflow: Workflow, result: BridgeExecuteResult, payload: Record<string, unknown>): void {
  if (!step || result.options.skip) return;
  if (job.type === 'digest' || job.type === 'throttle') {
    const controls = controlsFromOutputs(job.type, result.outputs, 0);
    if (job.type === 'digest') job.digest = { ...digestMetadataOf(controls), ...(job.digest?.events ? { events: job.digest.events } : {}) };
    job.digestGroup = stepGroupOf({ _id: step._id, type: step.type, controls }, { workflowId: workflow._id, subscriberId: job._subscriberId }, payload);
  }
}

/** The bridge's outputs in the shape Herald's step handlers read as controls. */
export function controlsFromOutputs(type: string, outputs: Record<string, unknown>, nowMs: number): Record<string, unknown> {
  switch (type) {
    case 'delay': {
      if (outputs.type === 'dynamic' && typeof outputs.dynamicKey === 'string') return { type: 'scheduled', delayPath: outputs.dynamicKey };
      if (outputs.type === 'timed' && typeof outputs.cron === 'string') {
        // Until the cron's next match, as a regular wait from now.
        const next = nextCronAt(outputs.cron, nowMs);
        return next === undefined ? { type: 'timed', cron: outputs.cron } : { type: 'regular', amount: Math.max(0, Math.ceil((next - nowMs) / 1000)), unit: 'seconds' };
      }
      return { type: 'regular', amount: outputs.amount, unit: outputs.unit };
    }
    case 'digest': {
      const controls: Record<string, unknown> = {};
      if (typeof outputs.cron === 'string') controls.cron = outputs.cron;
      else Object.assign(controls, { type: 'regular', amount: outputs.amount, unit: outputs.unit });
      if (typeof outputs.digestKey === 'string' && outputs.digestKey !== '') controls.digestKey = outputs.digestKey;
      if (outputs.lookBackWindow && typeof outputs.lookBackWindow === 'object') controls.lookBackWindow = outputs.lookBackWindow;
      return controls;
    }
    case 'throttle':
      return { type: outputs.type, amount: outputs.amount, unit: outputs.unit, threshold: outputs.threshold ?? 1, ...(outputs.throttleKey ? { throttleKey: outputs.throttleKey } : {}) };
    case 'email':
      return { subject: outputs.subject, body: outputs.body, ...(outputs.preheader ? { preheader: outputs.preheader } : {}) };
    default:
      return { ...outputs };
  }
}

/**
 * The trigger's overrides plus what the step's code sets beyond content: an email's `from`/`replyTo` (as
 * `overrides.email`), and the `providers` block (each provider's fields, passed to Herald's provider as its
 * provider overrides). The trigger's own overrides win, as they are the more specific.
 */
function overridesFromResult(job: StoredJob, result: BridgeExecuteResult): Record<string, unknown> {
  const overrides = { ...(job.overrides ?? {}) };
  if (job.type === 'email') {
    const from = result.outputs.from as { email?: string; name?: string } | undefined;
    const email: Record<string, unknown> = {};
    if (from?.email) email.from = from.email;
    if (from?.name) email.senderName = from.name;
    if (typeof result.outputs.replyTo === 'string') email.replyTo = result.outputs.replyTo;
    overrides.email = { ...email, ...((overrides.email as Record<string, unknown>) ?? {}) };
  }
  const providers: Record<string, unknown> = {};
  for (const [providerId, output] of Object.entries(result.providers ?? {})) {
    if (!output || typeof output !== 'object') continue;
    const { _passthrough: passthrough, ...fields } = output as Record<string, unknown>;
    const body = passthrough && typeof passthrough === 'object' ? ((passthrough as { body?: Record<string, unknown> }).body ?? {}) : {};
    const merged = { ...fields, ...body };
    if (Object.keys(merged).length > 0) providers[providerId] = merged;
  }
  if (Object.keys(providers).length > 0) overrides.providers = { ...providers, ...((overrides.providers as Record<string, unknown>) ?? {}) };
  return overrides;
}

/** Every earlier step of the event, described as the framework hydrates it. */
async function earlierSteps(store: Store, workflow: Workflow, siblings: StoredJob[], job: StoredJob): Promise<EarlierStep[]> {
  const earlier = siblings.filter((sibling) => sibling.stepIndex < job.stepIndex).sort((a, b) => a.stepIndex - b.stepIndex);
  return Promise.all(
    earlier.map(async (sibling): Promise<EarlierStep> => {
      const step = workflow.steps.find((candidate) => candidate._id === sibling.step._id);
      const metadata = sibling.step.metadata ?? {};
      const stepId = step?.stepId ?? (typeof metadata.bridgeStepId === 'string' ? metadata.bridgeStepId : sibling.step._id);
      const type = step?.bridge?.type ?? (typeof metadata.bridgeType === 'string' ? metadata.bridgeType : sibling.type);
      const failed = sibling.status === 'failed' ? [...sibling.executionDetails].reverse().find((detail) => detail.status === 'Failed')?.detail : undefined;
      const outputs = (metadata.bridgeOutputs as Record<string, unknown> | undefined) ?? {};
      const described: EarlierStep = { stepId, type, status: sibling.status, ...(failed ? { error: failed } : {}) };
      if (type === 'in_app') {
        const message = await store.messages.findByJobId(sibling._environmentId, sibling._id);
        if (message) described.inApp = { seen: message.seen, read: message.read, lastSeenDate: message.lastSeenDate ?? null, lastReadDate: message.lastReadDate ?? null };
      } else if (type === 'delay') {
        const created = Date.parse(sibling.createdAt);
        described.durationMs = typeof outputs.amount === 'number' && isTimeUnit(outputs.unit) ? addTimeUnit(created, outputs.amount, outputs.unit) - created : 0;
      } else if (type === 'digest') {
        const events = sibling.digest?.events ?? [];
        described.digestEvents = events.map((payload, index) => ({ id: `${sibling._notificationId}-${index}`, time: sibling.createdAt, payload: payload ?? {} }));
      } else {
        described.outputs = outputs;
      }
      return described;
    }),
  );
}
