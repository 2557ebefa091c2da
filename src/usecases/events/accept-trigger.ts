import { contextKeysFromContext, type TriggerContext } from '../../domain/context-keys.js';
import { UnprocessableError, ValidationError } from '../../domain/errors.js';
import { newId, newTransactionId } from '../../domain/ids.js';
import { isoNow } from '../../domain/clock.js';
import { validatePayload } from '../../domain/payload-schema.js';
import type { Caller } from '../../domain/types.js';
import type { Workflow } from '../../domain/workflow.js';
import { JOB_NAMES, dedupeKeys, withTraceparent, type ProcessTriggerPayload } from '../../queue/jobs.js';
import type { EnqueueOptions } from '../../queue/ports.js';
import type { TriggerRecord } from '../../store/ports.js';
import type { Deps } from '../deps.js';

/** One recipient in a trigger's `to`: a subscriberId, a subscriber object (created or updated), or a topic. */
export type TriggerRecipient =
  | string
  | ({ subscriberId: string } & Record<string, unknown>)
  | { type: 'Topic'; topicKey: string; exclude?: string[] };

/** What a trigger request carries besides the workflow; stored as the trigger's `request`. */
export interface TriggerRequest {
  to?: TriggerRecipient | TriggerRecipient[];
  /** Every subscriber of the environment instead of `to`. */
  broadcast?: boolean;
  payload?: Record<string, unknown>;
  overrides?: Record<string, unknown>;
  actor?: string | Record<string, unknown>;
  context?: TriggerContext;
  tenant?: unknown;
  /** Code-first workflows: the bridge to discover and run the workflow from (Novu's stateless trigger). */
  bridgeUrl?: string;
  /** Code-first workflows: per-trigger control values, `{ steps: { <stepId>: {...} } }`. */
  controls?: { steps?: Record<string, Record<string, unknown>> };
}

export interface TriggerResult {
  acknowledged: true;
  status: 'processed';
  transactionId: string;
}

/** The 422 for a trigger naming a workflow that does not exist or is inactive, in the shape Novu clients parse. */
export function workflowNotFound(name: string, inactive = false): UnprocessableError {
  const message = inactive
    ? `Workflow with identifier ${name} is not active`
    : `Workflow with identifier ${name} cannot be found`;
  return new UnprocessableError(inactive ? 'workflow_not_active' : 'workflow_not_found', { name: { messages: [message], value: name } });
}

/** The triggerable workflow named `name`, or the 422 for it. */
export async function findTriggerableWorkflow(deps: Deps, caller: Caller, name: string): Promise<Workflow> {
  // Only read (validated against, its id recorded): the process's shared copy will do.
  const workflow = await deps.store.workflows.get(caller.environmentId, name, { shared: true });
  if (!workflow) throw workflowNotFound(name);
  if (!workflow.active) throw workflowNotFound(name, true);
  return workflow;
}

/** Checks what can be checked before a 201: recipients, payload schema, context. Throws ValidationError. */
export function validateTriggerRequest(deps: Deps, workflow: Workflow, request: TriggerRequest): void {
  if (!request.broadcast) {
    const recipients = Array.isArray(request.to) ? request.to : request.to === undefined ? [] : [request.to];
    if (recipients.length === 0) throw new ValidationError(['to must name at least one recipient']);
    if (recipients.length > deps.config.triggerMaxRecipients) {
      throw new ValidationError([`to must have at most ${deps.config.triggerMaxRecipients} recipients`]);
    }
    const problems = recipients.flatMap((recipient, index) => recipientProblems(recipient, Array.isArray(request.to) ? `to[${index}]` : 'to'));
    if (problems.length > 0) throw new ValidationError(problems);
  }
  const payloadProblems = validatePayload(workflow.payloadSchema, request.payload ?? {}, { framework: workflow.origin === 'external' });
  if (payloadProblems.length > 0) throw new ValidationError(payloadProblems);
  contextKeysFromContext(request.context);
}

function recipientProblems(recipient: unknown, field: string): string[] {
  if (typeof recipient === 'string') return recipient.trim() === '' ? [`${field} must not be empty`] : [];
  if (recipient === null || typeof recipient !== 'object' || Array.isArray(recipient)) {
    return [`${field} must be a subscriberId, a subscriber object or a topic`];
  }
  const record = recipient as Record<string, unknown>;
  if (record.type === 'Topic') {
    return typeof record.topicKey === 'string' && record.topicKey.trim() !== '' ? [] : [`${field}.topicKey must be a non-empty string`];
  }
  if (typeof record.subscriberId !== 'string' || record.subscriberId.trim() === '') return [`${field}.subscriberId must be a non-empty string`];
  return [];
}

/**
 * Records an accepted trigger and enqueues its processing. The trigger row is written first: if the process
 * dies before the queue row exists, the worker's start-up sweep enqueues it (dedupe key = trigger id), so a
 * 201 is never lost. A transactionId already used in the environment creates nothing and answers as the first did.
 */
export async function acceptTrigger(
  deps: Deps,
  input: { caller: Caller; workflow: Workflow; request: TriggerRequest; transactionId?: string },
): Promise<TriggerResult> {
  const now = isoNow(deps.clock);
  const record: TriggerRecord = {
    _id: newId(deps.clock.now()),
    environmentId: input.caller.environmentId,
    organizationId: input.caller.organizationId,
    transactionId: input.transactionId ?? newTransactionId(deps.clock.now()),
    workflowId: input.workflow.workflowId,
    request: stripUndefined(input.request),
    state: 'accepted',
    createdAt: now,
    updatedAt: now,
  };
  const creating = deps.store.triggers.create(record);
  // Embedded: the queue row is written with the trigger row (one commit wait). A repeated transactionId leaves a job
  // for a trigger id that was never stored, which finds nothing to do.
  const alongside = deps.queue.enqueueAlongside ? enqueueTrigger(deps, record, creating) : undefined;
  const [{ trigger, created }] = await Promise.all([creating, alongside]);
  if (created) deps.metrics.triggersAccepted(1);
  // A repeat of a trigger whose first enqueue failed re-enqueues it; the dedupe key makes this a no-op otherwise.
  if ((created && !alongside) || (!created && trigger.state === 'accepted')) await enqueueTrigger(deps, trigger);
  return { acknowledged: true, status: 'processed', transactionId: trigger.transactionId };
}

/** Enqueues the trigger's processing; with `write` (the trigger's insert, under way) alongside it (JobQueue.enqueueAlongside). */
export async function enqueueTrigger(deps: Deps, trigger: Pick<TriggerRecord, '_id' | 'environmentId'>, write?: Promise<unknown>): Promise<void> {
  const { payload, options } = triggerJob(trigger);
  const traced = withTraceparent(payload, deps.tracing.traceparent());
  if (write && deps.queue.enqueueAlongside) await deps.queue.enqueueAlongside(write, JOB_NAMES.processTrigger, traced, options);
  else await deps.queue.enqueue(JOB_NAMES.processTrigger, traced, options);
}

/** The queue job that processes a trigger, deduplicated by the trigger id. */
export function triggerJob(trigger: Pick<TriggerRecord, '_id' | 'environmentId'>): { payload: ProcessTriggerPayload; options: EnqueueOptions } {
  return { payload: { environmentId: trigger.environmentId, triggerId: trigger._id }, options: { dedupeKey: dedupeKeys.trigger(trigger._id) } };
}

function stripUndefined(request: TriggerRequest): Record<string, unknown> {
  return Object.fromEntries(Object.entries(request).filter(([, value]) => value !== undefined));
}
