import { catalogueEntries, type CatalogueEntry } from '../../domain/provider-catalogue.js';
import { ValidationError } from '../../domain/errors.js';
import type { DeliveryChannel, IntegrationKind } from '../../domain/types.js';

export interface ProviderChoice {
  providerId: string;
  channel?: DeliveryChannel;
  kind?: IntegrationKind;
}

/**
 * The catalogue entry an integration is made for. The catalogue decides channel and kind: an agent
 * provider takes no channel, a delivery provider's channel must be its own, and a provider serving two
 * channels (`clickatell`) needs the channel to be named.
 */
export function resolveCatalogueEntry(choice: ProviderChoice): CatalogueEntry {
  const { providerId, channel, kind } = choice;
  const entries = catalogueEntries(providerId);
  if (entries.length === 0) {
    throw new ValidationError([`providerId "${providerId}" is not a known provider id`]);
  }
  const agent = entries.find((entry) => entry.kind === 'agent');
  if (agent) {
    const problems: string[] = [];
    if (channel !== undefined) problems.push(`channel must be absent for agent provider ${providerId}`);
    if (kind !== undefined && kind !== 'agent') problems.push(`kind must be agent for agent provider ${providerId}`);
    if (problems.length > 0) throw new ValidationError(problems);
    return agent;
  }
  if (kind === 'agent') {
    throw new ValidationError([`kind agent requires an agent provider; ${providerId} is a delivery provider`]);
  }
  const channels = entries.map((entry) => entry.channel).join(' or ');
  if (channel === undefined) {
    if (entries.length === 1) return entries[0]!;
    throw new ValidationError([`channel is required for provider ${providerId} (${channels})`]);
  }
  const entry = entries.find((candidate) => candidate.channel === channel);
  if (!entry) throw new ValidationError([`channel ${channel} does not match provider ${providerId} (${channels})`]);
  return entry;
}
