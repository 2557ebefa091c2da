import { PROVIDER_CATALOGUE } from '../../domain/provider-catalogue.js';
import type { DeliveryChannel, IntegrationKind } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface ProviderCatalogueItem {
  providerId: string;
  channel?: DeliveryChannel;
  kind: IntegrationKind;
  /** Whether Herald delivers through it (otherwise it is accepted for configuration only). */
  deliverable: boolean;
  /** The fields the integration form shows; `required` ones must be set before it can be active. */
  credentialFields: Array<{ key: string; required: boolean; secret: boolean }>;
}

/** Credential fields that hold secrets: the form masks them. */
const SECRET_FIELDS = new Set(['apiKey', 'secretKey', 'password', 'token', 'authToken', 'accessToken', 'serviceAccount', 'secretAccessKey', 'sessionToken', 'apiToken']);
/** Fields every delivering provider of a channel also reads when set (endpoint overrides, sender display name). */
const OPTIONAL_BY_CHANNEL: Partial<Record<DeliveryChannel, string[]>> = {
  email: ['senderName', 'baseUrl'],
  sms: ['baseUrl'],
  chat: ['baseUrl'],
  push: ['baseUrl'],
};

/** The provider catalogue per channel with each provider's credential fields, for the integration form. */
export function listProviders(deps: Pick<Deps, 'providers'>): ProviderCatalogueItem[] {
  return PROVIDER_CATALOGUE.map((entry) => {
    const deliverable = entry.channel === 'in_app' ? entry.id === 'novu' : entry.channel ? deps.providers.get(entry.id, entry.channel) !== undefined : false;
    const optional = deliverable && entry.channel ? (OPTIONAL_BY_CHANNEL[entry.channel] ?? []).filter((key) => !entry.requiredCredentials.includes(key)) : [];
    return {
      providerId: entry.id,
      ...(entry.channel ? { channel: entry.channel } : {}),
      kind: entry.kind,
      deliverable,
      credentialFields: [
        ...entry.requiredCredentials.map((key) => ({ key, required: true, secret: SECRET_FIELDS.has(key) })),
        ...optional.map((key) => ({ key, required: false, secret: false })),
      ],
    };
  });
}
