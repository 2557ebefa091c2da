import { STEP_TYPES, type StepType } from '../../domain/types.js';

/**
 * An event's `channels` as a bit set (bit i = STEP_TYPES[i]) in the integer column `channels_mask`, so the
 * `channels` filter of the event list is one indexed-row test `(channels_mask & ?) != 0` instead of a JSON scan.
 * The bit order is persisted: append new step types at the end of STEP_TYPES, never reorder.
 */
export function channelsToMask(channels: readonly string[] | undefined): number {
  let mask = 0;
  for (const channel of channels ?? []) {
    const bit = STEP_TYPES.indexOf(channel as StepType);
    if (bit >= 0) mask |= 1 << bit;
  }
  return mask;
}

export function maskToChannels(mask: number): StepType[] {
  return STEP_TYPES.filter((_, bit) => (mask & (1 << bit)) !== 0);
}
