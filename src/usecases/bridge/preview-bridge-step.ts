import type { BridgeExecuteResult } from '../../bridge/ports.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { subscriberForTemplates } from '../engine/run-job.js';
import { bridgeRefusal, bridgeTargetForWorkflow } from './bridge-target.js';
import { externalStep } from './step-controls.js';

export interface PreviewBridgeStepInput {
  caller: Caller;
  workflowId: string;
  stepId: string;
  /** Control values to preview with; the stored ones when absent. */
  controls?: Record<string, unknown>;
  /** Payload fields; the framework fills the missing ones with sample data from the payload schema. */
  payload?: Record<string, unknown>;
  /** A subscriber of the environment to preview for; a sample one when absent. */
  subscriberId?: string;
}

/**
 * POST /v1/bridge/preview/{workflowId}/{stepId}: the step's content as the code computes it, through the bridge's
 * `?action=preview` (earlier steps' results are mocked by the framework). A refused or failed call is a 400 saying why.
 */
export async function previewBridgeStep(deps: Deps, input: PreviewBridgeStepInput): Promise<BridgeExecuteResult> {
  const { workflow, step } = await externalStep(deps, input.caller, input.workflowId, input.stepId);
  const stored = await deps.store.bridge.getControls(input.caller.environmentId, workflow.workflowId, step.stepId);
  const subscriber = input.subscriberId ? await deps.store.subscribers.findBySubscriberId(input.caller.environmentId, input.subscriberId) : undefined;
  const target = await bridgeTargetForWorkflow(deps, workflow).catch((error) => bridgeRefusal(error, workflow.bridgeUrl ?? '(none synced)'));
  try {
    const { result } = await deps.bridge.execute(target, {
      action: 'preview',
      workflowId: workflow.workflowId,
      stepId: step.stepId,
      body: {
        payload: input.payload ?? {},
        controls: input.controls ?? stored ?? {},
        state: [],
        subscriber: subscriber ? subscriberForTemplates(subscriber) : { subscriberId: 'preview-subscriber', firstName: 'Jane', lastName: 'Doe', email: 'jane@example.com' },
        context: {},
        env: {},
      },
    });
    return result;
  } catch (error) {
    bridgeRefusal(error, target.url);
  }
}
