import { evaluateStepFilters, type FilterSources } from '../../domain/step-filters.js';
import { fallbackProviderId } from '../../domain/job-provider.js';
import type { DeliveryChannel, Integration, StepType } from '../../domain/types.js';

export type IntegrationChoice = { integration: Integration } | { reason: string };

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function nonEmptyText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/**
 * The integration a trigger names for a channel step: `overrides.<channel>.integrationIdentifier` (Novu's
 * per-channel form, e.g. `overrides.email.integrationIdentifier`), else the top-level
 * `overrides.integrationIdentifier`.
 */
export function requestedIntegrationIdentifier(overrides: Record<string, unknown> | undefined, channel: DeliveryChannel): string | undefined {
  const all = overrides ?? {};
  return nonEmptyText(record(all[channel]).integrationIdentifier) ?? nonEmptyText(all.integrationIdentifier);
}

/**
 * Pure choice among the live, active integrations of one channel:
 * - a named identifier picks exactly that integration (its conditions are not evaluated: the caller chose it);
 * - otherwise integrations whose `conditions` fail are out, and one whose non-empty conditions passed is
 *   preferred over an unconditional one (a matching condition is the more specific rule);
 * - among those, the primary first, then the highest priority, then the newest.
 */
export function chooseIntegration(
  integrations: Integration[],
  channel: DeliveryChannel,
  sources: FilterSources,
  requestedIdentifier?: string,
): IntegrationChoice {
  const active = integrations.filter((integration) => integration.active && !integration.deleted && integration.channel === channel);
  if (requestedIdentifier !== undefined) {
    const named = active.find((integration) => integration.identifier === requestedIdentifier);
    if (named) return { integration: named };
    return { reason: `integration "${requestedIdentifier}" named in the trigger's overrides is not an active ${channel} integration` };
  }
  if (active.length === 0) return { reason: `no active integration for channel ${channel}` };
  const passing = active.filter((integration) => evaluateStepFilters(integration.conditions, sources).passed);
  if (passing.length === 0) return { reason: `no active ${channel} integration whose conditions match` };
  const conditioned = passing.filter((integration) => integration.conditions.length > 0);
  const pool = conditioned.length > 0 ? conditioned : passing;
  const [best] = [...pool].sort(
    (a, b) =>
      Number(b.primary) - Number(a.primary) ||
      b.priority - a.priority ||
      b.createdAt.localeCompare(a.createdAt) ||
      b._id.localeCompare(a._id),
  );
  return { integration: best };
}

const PROVIDER_CHANNELS: ReadonlySet<string> = new Set(['email', 'sms', 'chat', 'push']);

/** Whether a step of this type sends through an integration's provider (and so needs one chosen). */
export function sendsThroughProvider(stepType: StepType): stepType is Exclude<DeliveryChannel, 'in_app'> {
  return PROVIDER_CHANNELS.has(stepType);
}

/**
 * The providerId a new job carries: for a provider channel, the provider of the integration the step would use now
 * (the worker chooses again when it sends, and records the one it used); otherwise, or when no integration fits,
 * the step type's documented fallback. Never empty.
 */
export function plannedProviderId(
  stepType: StepType,
  integrations: Integration[],
  sources: FilterSources,
  overrides: Record<string, unknown> | undefined,
): string {
  if (!sendsThroughProvider(stepType)) return fallbackProviderId(stepType);
  const choice = chooseIntegration(integrations, stepType, sources, requestedIntegrationIdentifier(overrides, stepType));
  return 'integration' in choice ? choice.integration.providerId : fallbackProviderId(stepType);
}
