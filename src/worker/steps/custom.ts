import type { StepOutcome, StepRun } from '../../usecases/engine/step-context.js';

/** Custom: calls the handler registered in code under `controls.handler` (else the step's name). */
export async function customStep(run: StepRun): Promise<StepOutcome> {
  const name = typeof run.controls.handler === 'string' ? run.controls.handler : (run.step.name ?? '');
  const handler = run.customSteps.get(name);
  if (!handler) return { status: 'failed', detail: `no custom step handler registered as "${name}"` };
  const controls = await run.renderer.renderControls(run.controls, run.templateContext);
  const result = await handler({
    payload: run.templateContext.payload,
    subscriber: run.subscriber,
    controls,
    transactionId: run.job.transactionId,
    environmentId: run.job._environmentId,
  });
  return { status: 'completed', detail: `Custom step "${name}" completed`, raw: result ? JSON.stringify(result) : undefined };
}
