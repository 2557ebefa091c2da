import { throttleDecision, throttleWindowMs } from '../../domain/throttle-window.js';
import { isTimeUnit } from '../../domain/time-units.js';
import type { StepOutcome, StepRun } from '../../usecases/engine/step-context.js';

/**
 * Throttle (runs in a transaction): at most `threshold` events pass per `amount unit` window for the subscriber
 * (or per throttleKey value); an event over the limit ends `skipped` with every later step of its workflow.
 */
export async function throttleStep(run: StepRun): Promise<StepOutcome> {
  const { job, store, controls } = run;
  const amount = typeof controls.amount === 'number' ? controls.amount : undefined;
  const unit = controls.unit;
  const limit = typeof controls.threshold === 'number' ? controls.threshold : 1;
  if (amount === undefined || amount <= 0 || !isTimeUnit(unit)) {
    return { status: 'failed', detail: `Throttle needs a positive amount and a unit, got ${JSON.stringify({ amount, unit })}` };
  }
  if (!job.digestGroup) return { status: 'completed', detail: 'Throttle passed' };
  const windowMs = throttleWindowMs({ amount, unit });
  const passed = await store.triggers.listJobsInGroup(job._environmentId, job.digestGroup, ['completed']);
  const decision = throttleDecision({
    limit,
    windowMs,
    sentTimestampsMs: passed.filter((ref) => ref._id !== job._id).map((ref) => Date.parse(ref.updatedAt)),
    nowMs: run.deps.clock.now(),
  });
  const rule = `${limit} per ${amount} ${unit}`;
  if (decision.allowed) return { status: 'completed', detail: `Throttle passed (${rule})` };
  return { status: 'skipped', detailStatus: 'Warning', detail: `Throttled: more than ${rule}`, skipRest: true };
}
