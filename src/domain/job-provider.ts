import type { StepType } from './types.js';

/**
 * The `providerId` a job shows when no integration is (yet) chosen for it. Novu clients type a job's providerId as
 * a closed enum of provider ids (`@novu/api`'s ProvidersIdEnum), so it is never empty: a channel step without an
 * active integration shows Novu's own provider for its channel (`novu-email`, `novu-sms`, `novu-slack`, `novu` for
 * in-app), and every other step, which Herald runs itself (delay, digest, throttle, custom, http_request, trigger,
 * and push, for which Novu has no provider of its own), shows `novu`.
 */
export const FALLBACK_PROVIDER_IDS: Readonly<Record<StepType, string>> = {
  in_app: 'novu',
  email: 'novu-email',
  sms: 'novu-sms',
  chat: 'novu-slack',
  push: 'novu',
  digest: 'novu',
  trigger: 'novu',
  delay: 'novu',
  throttle: 'novu',
  custom: 'novu',
  http_request: 'novu',
};

export function fallbackProviderId(stepType: StepType): string {
  return FALLBACK_PROVIDER_IDS[stepType] ?? 'novu';
}

/** The providerId to present for a job: its own, or its step type's fallback (jobs stored before it was planned). */
export function presentedProviderId(job: { type: StepType; providerId?: string | null }): string {
  return job.providerId ? job.providerId : fallbackProviderId(job.type);
}
