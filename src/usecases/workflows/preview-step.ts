import { NotFoundError } from '../../domain/errors.js';
import { createTemplateRenderer, TemplateError, type TemplateContext } from '../../domain/templates.js';
import type { Caller } from '../../domain/types.js';
import type { WorkflowStep } from '../../domain/workflow.js';
import type { Deps } from '../deps.js';
import { text } from '../engine/build-message.js';

export interface PreviewStepInput {
  caller: Caller;
  /** The workflow's `_id` or workflowId. */
  workflowId: string;
  /** The step's `stepId` (slug) or `_id`. */
  stepId: string;
  /** The editor's current control values; the stored ones when absent. */
  controlValues?: Record<string, unknown>;
  previewPayload?: { subscriber?: Record<string, unknown>; payload?: Record<string, unknown>; actor?: Record<string, unknown> };
}

export interface PreviewResult {
  type: string;
  preview?: Record<string, unknown>;
  error?: { title: string; message: string; hint: string };
}

export interface StepPreview {
  /** The payload and subscriber the preview was rendered with (the given ones, or samples). */
  previewPayloadExample: { subscriber: Record<string, unknown>; payload: Record<string, unknown>; actor?: Record<string, unknown> };
  schema?: Record<string, unknown> | null;
  result: PreviewResult;
}

const SAMPLE_SUBSCRIBER = { subscriberId: 'preview-subscriber', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+15550000000', locale: 'en', data: {} };

/** One renderer for previews: the same Liquid rules and limits as the worker's. */
const renderer = createTemplateRenderer();

/**
 * Renders one step of a workflow for the editor, as @novu/api's `workflows.steps.generatePreview`
 * (POST /v2/workflows/{workflowId}/step/{stepId}/preview): channel steps with the worker's template code, from the
 * given (or stored) control values and a sample subscriber and payload. A template that does not render is a
 * result with `error`, not an HTTP error: the editor shows it next to the field.
 */
export async function previewStep(deps: Pick<Deps, 'store'>, input: PreviewStepInput): Promise<StepPreview> {
  const workflow = await deps.store.workflows.get(input.caller.environmentId, input.workflowId);
  if (!workflow) throw NotFoundError.entity('Workflow', input.workflowId);
  const step = workflow.steps.find((candidate) => candidate.stepId === input.stepId || candidate._id === input.stepId);
  if (!step) throw NotFoundError.entity('Step', input.stepId);

  const subscriber = { ...SAMPLE_SUBSCRIBER, ...(input.previewPayload?.subscriber ?? {}) };
  const payload = input.previewPayload?.payload ?? {};
  const actor = input.previewPayload?.actor;
  const context: TemplateContext = { subscriber, payload, steps: {}, ...(actor ? { actor } : {}) };
  const controls = input.controlValues ?? step.controls;
  const example = { subscriber, payload, ...(actor ? { actor } : {}) };
  try {
    const rendered = await renderer.renderControls(controls, context);
    return { previewPayloadExample: example, schema: workflow.payloadSchema ?? null, result: { type: step.type, preview: previewOf(step, rendered) } };
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    return {
      previewPayloadExample: example,
      schema: workflow.payloadSchema ?? null,
      result: {
        type: step.type,
        error: { title: 'Template could not be rendered', message: error.message, hint: 'Check the Liquid syntax and the filters used (see README, templates)' },
      },
    };
  }
}

/** The rendered controls in the shape of @novu/api's render outputs for the step type. */
function previewOf(step: WorkflowStep, controls: Record<string, unknown>): Record<string, unknown> {
  const body = text(controls.body) ?? text(controls.content) ?? '';
  switch (step.type) {
    case 'email':
      return { subject: text(controls.subject) ?? '', body };
    case 'sms':
      return { body };
    case 'chat':
      return { body };
    case 'push':
      return { subject: text(controls.subject) ?? text(controls.title) ?? '', body };
    case 'in_app': {
      const preview: Record<string, unknown> = { body };
      for (const key of ['subject', 'avatar', 'primaryAction', 'secondaryAction', 'redirect', 'data'] as const) {
        if (controls[key] !== undefined && controls[key] !== null && controls[key] !== '') preview[key] = controls[key];
      }
      return preview;
    }
    default:
      // delay, digest, throttle, http_request, custom: their settings as they would be used.
      return controls;
  }
}
