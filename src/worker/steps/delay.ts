import { computeDelayUntil, type DelayMetadata } from '../../domain/delay.js';
import type { StepOutcome, StepRun } from '../../usecases/engine/step-context.js';

/** Delay: waits (regular amount + unit, or until the payload's `delayPath` date), then lets the next step run. */
export async function delayStep(run: StepRun): Promise<StepOutcome> {
  if (run.resumed) return { status: 'completed', detail: 'Delay finished' };
  const metadata = { ...run.controls, ...(run.step.metadata ?? {}) } as DelayMetadata;
  const now = run.deps.clock.now();
  const decision = computeDelayUntil(metadata, run.templateContext.payload, now);
  if ('error' in decision) return { status: 'failed', detail: decision.error };
  if (decision.runAt <= now) return { status: 'completed', detail: 'Delay already elapsed' };
  return { status: 'delayed', resumeAt: decision.runAt, detail: `Delayed until ${new Date(decision.runAt).toISOString()}` };
}
