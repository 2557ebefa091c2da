import type { Deps } from '../deps.js';

export interface FinishIdempotencyKeyInput {
  environmentId: string;
  key: string;
  status: number;
  body: string;
  headers: Record<string, string>;
}

/**
 * Stores the answer of a claimed request for replay. A server error (≥ 500) is not an answer worth
 * replaying: the claim is released so a retry runs again. Client errors are stored like successes.
 */
export async function finishIdempotencyKey(deps: Pick<Deps, 'idempotency'>, input: FinishIdempotencyKeyInput): Promise<void> {
  if (input.status >= 500) {
    await deps.idempotency.release(input.environmentId, input.key);
    return;
  }
  await deps.idempotency.complete(input.environmentId, input.key, { status: input.status, body: input.body, headers: input.headers });
}

/** Drops a claim whose request ended without an answer to store. */
export async function releaseIdempotencyKey(deps: Pick<Deps, 'idempotency'>, input: { environmentId: string; key: string }): Promise<void> {
  await deps.idempotency.release(input.environmentId, input.key);
}
