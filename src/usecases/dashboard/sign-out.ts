import type { Deps } from '../deps.js';
import { hashOpaqueToken } from './opaque-tokens.js';

/** Ends the session server-side: the cookie value no longer signs anyone in, on any process. */
export async function signOut(deps: Pick<Deps, 'store'>, input: { sessionToken: string }): Promise<{ acknowledged: true }> {
  await deps.store.dashboard.deleteSession(hashOpaqueToken(input.sessionToken));
  return { acknowledged: true };
}
