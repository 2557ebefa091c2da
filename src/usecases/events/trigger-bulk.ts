import { DomainError, ValidationError } from '../../domain/errors.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import type { TriggerEventInput } from './trigger-event.js';
import { acceptTrigger, findTriggerableWorkflow, validateTriggerRequest } from './accept-trigger.js';

export interface TriggerBulkInput {
  caller: Caller;
  events: Array<Omit<TriggerEventInput, 'caller'>>;
  /** Per event, the transactionId used when the event names none (stable across runs of a keyed request). */
  fallbackTransactionIds?: Array<string | undefined>;
}

/** One entry per event, in order; an event that cannot be accepted says why instead of failing the batch (Novu's shape). */
export interface BulkTriggerResult {
  acknowledged: boolean;
  status: 'processed' | 'error';
  transactionId?: string;
  error?: string[];
}

/** POST /v1/events/trigger/bulk: each event is accepted on its own, like a single trigger. */
export async function triggerBulk(deps: Deps, input: TriggerBulkInput): Promise<BulkTriggerResult[]> {
  if (input.events.length > deps.config.bulkTriggerMaxEvents) {
    throw new ValidationError([`events must have at most ${deps.config.bulkTriggerMaxEvents} items`]);
  }
  const results: BulkTriggerResult[] = [];
  for (const [index, event] of input.events.entries()) {
    const { name, transactionId, ...request } = event;
    try {
      const workflow = await findTriggerableWorkflow(deps, input.caller, name);
      validateTriggerRequest(deps, workflow, request);
      results.push(await acceptTrigger(deps, { caller: input.caller, workflow, request, transactionId: transactionId ?? input.fallbackTransactionIds?.[index] }));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const messages = error instanceof ValidationError ? error.messages : [error.message];
      results.push({ acknowledged: false, status: 'error', error: messages, ...(transactionId ? { transactionId } : {}) });
    }
  }
  return results;
}
