import { newApplicationIdentifier, newId } from '../../domain/ids.js';
import { isoNow } from '../../domain/clock.js';
import type { Deps } from '../deps.js';
import { createApiKey } from '../auth/api-keys.js';

export const BOOTSTRAP_ENVIRONMENTS = ['development', 'production'] as const;

export interface BootstrapResult {
  created: boolean;
  /** Secret keys made on this start, by environment name; shown once, never stored in plaintext. */
  keys: Record<string, string>;
  /** Public application identifiers (the Inbox's `applicationIdentifier`) of the environments made on this start. */
  identifiers: Record<string, string>;
}

/**
 * On the first start: one organization with a development and a production environment and a secret
 * key for each. Guarded by a settings row so concurrent starts (scale-out) bootstrap exactly once.
 */
export async function bootstrapTenancy(
  deps: Pick<Deps, 'store' | 'clock'>,
  options: { bootstrapSecretKey?: string } = {},
): Promise<BootstrapResult> {
  return deps.store.transaction(async (store) => {
    const marker = newId(deps.clock.now());
    const winner = await store.tenancy.putSettingIfAbsent('bootstrapped', marker);
    if (winner !== marker) {
      // Keys made at a first start before the last-four hint was stored showed only dots in the dashboard.
      await store.tenancy.backfillApiKeyHints();
      return { created: false, keys: {}, identifiers: {} };
    }

    const createdAt = isoNow(deps.clock);
    const organizationId = newId(deps.clock.now());
    await store.tenancy.createOrganization({ _id: organizationId, name: 'Herald', createdAt });
    const keys: Record<string, string> = {};
    const identifiers: Record<string, string> = {};
    for (const name of BOOTSTRAP_ENVIRONMENTS) {
      const identifier = newApplicationIdentifier();
      await store.tenancy.createEnvironment({ _id: newId(deps.clock.now()), _organizationId: organizationId, name, identifier, createdAt });
      identifiers[name] = identifier;
      const secretKey = name === 'development' ? options.bootstrapSecretKey : undefined;
      const created = await createApiKey({ store, clock: deps.clock }, { environmentName: name, secretKey });
      keys[name] = created.secretKey;
    }
    return { created: true, keys, identifiers };
  });
}
