import { randomBytes } from 'node:crypto';
import { isoNow } from '../../domain/clock.js';
import { newId } from '../../domain/ids.js';
import type {
  Caller,
  Credentials,
  DeliveryChannel,
  Integration,
  IntegrationConfigurations,
  IntegrationKind,
  StepFilter,
} from '../../domain/types.js';
import type { Deps } from '../deps.js';
import { canBePrimary, nextPriority, sameChannel } from './channel-priority.js';
import { checkIntegration } from './check-integration.js';
import { assertCallerEnvironment, assertIdentifierFree } from './integration-access.js';
import { presentIntegration, type IntegrationView } from './integration-view.js';
import { resolveCatalogueEntry } from './resolve-catalogue-entry.js';
import { validateIntegrationCredentials } from './validate-integration-credentials.js';
import { normalizeCredentials } from '../../domain/provider-catalogue.js';

export interface CreateIntegrationInput {
  caller: Caller;
  providerId: string;
  channel?: DeliveryChannel;
  kind?: IntegrationKind;
  name?: string;
  identifier?: string;
  credentials?: Credentials;
  /** Default false: an integration is switched on explicitly. */
  active?: boolean;
  /** Default true; runs only when the new integration is active. */
  check?: boolean;
  conditions?: StepFilter[];
  configurations?: IntegrationConfigurations;
  _environmentId?: string;
}

const IDENTIFIER_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `<providerId>-<6 random characters>`, the form Novu generates when no identifier is given. */
export function defaultIdentifier(providerId: string): string {
  const suffix = [...randomBytes(6)].map((byte) => IDENTIFIER_ALPHABET[byte % IDENTIFIER_ALPHABET.length]).join('');
  return `${providerId}-${suffix}`;
}

/**
 * Creates an integration in the caller's environment. The catalogue fixes channel and kind; an active
 * integration must have its required credentials and pass the provider's live check (unless `check` is
 * false). It gets the next priority of its channel and becomes primary when it is the channel's first
 * active one.
 */
export async function createIntegration(deps: Deps, input: CreateIntegrationInput): Promise<IntegrationView> {
  const { caller } = input;
  assertCallerEnvironment(caller, input._environmentId);
  const entry = resolveCatalogueEntry({ providerId: input.providerId, channel: input.channel, kind: input.kind });
  const credentials = normalizeCredentials(input.credentials ?? {});
  const active = input.active ?? false;
  if (active) validateIntegrationCredentials(entry, credentials);
  // Cheap local rules first, so a 409 never costs a live provider round trip.
  if (input.identifier !== undefined) await assertIdentifierFree(deps.store, caller, input.identifier);
  if (active && input.check !== false) {
    await checkIntegration(deps, { providerId: entry.id, channel: entry.channel, credentials });
  }

  const integration = await deps.store.transaction(async (store) => {
    const identifier = input.identifier ?? defaultIdentifier(entry.id);
    await assertIdentifierFree(store, caller, identifier);
    const now = isoNow(deps.clock);
    const draft: Integration = {
      _id: newId(deps.clock.now()),
      _environmentId: caller.environmentId,
      _organizationId: caller.organizationId,
      name: input.name ?? entry.id,
      identifier,
      providerId: entry.id,
      ...(entry.channel ? { channel: entry.channel } : {}),
      kind: entry.kind,
      credentials,
      configurations: input.configurations ?? {},
      active,
      deleted: false,
      primary: false,
      priority: 0,
      conditions: input.conditions ?? [],
      createdAt: now,
      updatedAt: now,
    };
    const siblings = (await store.integrations.list(caller.environmentId, entry.channel ? { channel: entry.channel } : {}))
      .filter((other) => sameChannel(other, draft));
    draft.priority = nextPriority(siblings);
    draft.primary = active && canBePrimary(draft) && !siblings.some((other) => other.active && other.primary);
    await store.integrations.create(draft);
    return draft;
  });
  return presentIntegration(integration, caller);
}
