import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { workflowFromBridgeUrl } from '../bridge/stateless-workflow.js';
import { acceptTrigger, findTriggerableWorkflow, validateTriggerRequest, type TriggerRequest, type TriggerResult } from './accept-trigger.js';

export interface TriggerEventInput extends Omit<TriggerRequest, 'broadcast'> {
  caller: Caller;
  /** The workflow's identifier (workflowId). */
  name: string;
  transactionId?: string;
}

/** POST /v1/events/trigger: validates, records the trigger and enqueues it; the worker does the rest. */
export async function triggerEvent(deps: Deps, input: TriggerEventInput): Promise<TriggerResult> {
  const { caller, name, transactionId, ...request } = input;
  // A code-first app's trigger may name its bridge: the workflow is discovered there (never synced is fine).
  const workflow = request.bridgeUrl !== undefined ? await workflowFromBridgeUrl(deps, caller, request.bridgeUrl, name) : await findTriggerableWorkflow(deps, caller, name);
  validateTriggerRequest(deps, workflow, request);
  return acceptTrigger(deps, { caller, workflow, request, transactionId });
}
