import { digestKeyValue } from '../../domain/digest-window.js';
import type { DigestMetadata, TimeUnit } from '../../domain/types.js';
import type { WorkflowStep } from '../../domain/workflow.js';

/** A digest step's controls as the spec's DigestMetadata (`cron` becomes a timed digest's cronExpression). */
export function digestMetadataOf(controls: Record<string, unknown>): DigestMetadata {
  const cron = typeof controls.cron === 'string' && controls.cron.trim() !== '' ? controls.cron : undefined;
  const type = cron ? 'timed' : ((['regular', 'backoff', 'timed'].includes(controls.type as string) ? controls.type : 'regular') as DigestMetadata['type']);
  const metadata: DigestMetadata = { type };
  if (typeof controls.amount === 'number') metadata.amount = controls.amount;
  if (typeof controls.unit === 'string') metadata.unit = controls.unit as TimeUnit;
  if (typeof controls.digestKey === 'string' && controls.digestKey !== '') metadata.digestKey = controls.digestKey;
  if (typeof controls.backoff === 'boolean') metadata.backoff = controls.backoff;
  if (typeof controls.backoffAmount === 'number') metadata.backoffAmount = controls.backoffAmount;
  if (typeof controls.backoffUnit === 'string') metadata.backoffUnit = controls.backoffUnit as TimeUnit;
  if (typeof controls.updateMode === 'boolean') metadata.updateMode = controls.updateMode;
  const timed = controls.timed && typeof controls.timed === 'object' ? (controls.timed as DigestMetadata['timed']) : undefined;
  if (timed || cron) metadata.timed = { ...(timed ?? {}), ...(cron ? { cronExpression: cron } : {}) };
  return metadata;
}

/**
 * The group a digest or throttle job belongs to (jobs.digest_group): digests group one subscriber's events of one
 * step by the digest key's value; throttles count one subscriber's passes of one step, or everyone's when a
 * throttleKey is set (then per value of that key).
 */
export function stepGroupOf(
  step: Pick<WorkflowStep, '_id' | 'type' | 'controls'>,
  ids: { workflowId: string; subscriberId: string },
  payload: Record<string, unknown>,
): string | null {
  if (step.type === 'digest') {
    const key = digestKeyValue(digestMetadataOf(step.controls), payload);
    return `digest:${ids.workflowId}:${step._id}:${ids.subscriberId}:${key}`;
  }
  if (step.type === 'throttle') {
    const throttleKey = typeof step.controls.throttleKey === 'string' ? step.controls.throttleKey : undefined;
    if (throttleKey) return `throttle:${ids.workflowId}:${step._id}:key:${digestKeyValue({ digestKey: throttleKey }, payload)}`;
    return `throttle:${ids.workflowId}:${step._id}:${ids.subscriberId}`;
  }
  return null;
}
