import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { acceptTrigger, findTriggerableWorkflow, validateTriggerRequest, type TriggerRequest, type TriggerResult } from './accept-trigger.js';

export interface BroadcastEventInput extends Omit<TriggerRequest, 'to' | 'broadcast'> {
  caller: Caller;
  name: string;
  transactionId?: string;
}

/** POST /v1/events/trigger/broadcast: every non-deleted subscriber of the environment, resolved by the worker. */
export async function broadcastEvent(deps: Deps, input: BroadcastEventInput): Promise<TriggerResult> {
  const { caller, name, transactionId, ...rest } = input;
  const request: TriggerRequest = { ...rest, broadcast: true };
  const workflow = await findTriggerableWorkflow(deps, caller, name);
  validateTriggerRequest(deps, workflow, request);
  return acceptTrigger(deps, { caller, workflow, request, transactionId });
}
