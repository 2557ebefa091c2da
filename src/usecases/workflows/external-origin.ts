import { ValidationError } from '../../domain/errors.js';
import type { Workflow } from '../../domain/workflow.js';

/**
 * Workflows synced from a @novu/framework bridge are defined by the app's code: their steps, content and settings
 * change by changing the code and syncing again. Only what is operational stays editable here (`active` through
 * PATCH; control values through /v1/bridge/controls).
 */
export function refuseExternalEdit(workflow: Workflow, fields: string[]): void {
  if (workflow.origin !== 'external' || fields.length === 0) return;
  throw new ValidationError([
    `Workflow ${workflow.workflowId} has origin external: it is defined in code (@novu/framework) and its ${fields.join(', ')} cannot be changed here; change the code and run npx novu sync, or edit its control values with PUT /v1/bridge/controls/${workflow.workflowId}/{stepId}`,
  ]);
}
