import { maskedKey } from '../../domain/dashboard.js';
import type { Caller } from '../../domain/types.js';
import type { Deps } from '../deps.js';

export interface ApiKeyView {
  _id: string;
  /** The key's last four characters; absent for keys made before they were recorded. */
  last4?: string;
  /** What to show: a mask and the last four characters. */
  maskedKey: string;
  createdAt: string;
  createdBy?: string;
  revokedAt?: string;
}

/** The secret keys of the caller's environment, revoked ones included, newest first. Never the keys themselves. */
export async function listApiKeys(deps: Pick<Deps, 'store'>, input: { caller: Caller }): Promise<ApiKeyView[]> {
  return (await deps.store.dashboard.listApiKeys(input.caller.environmentId)).map(({ _environmentId: _env, ...key }) => ({
    ...key,
    maskedKey: maskedKey(key.last4),
  }));
}
