import { ProviderError, type SendResult, type TokenResult } from '../ports.js';

/** One device token's outcome, with the ProviderError behind a failure kept to judge the request as a whole. */
export interface TokenOutcome extends TokenResult {
  id?: string;
  failure?: ProviderError;
}

export function tokenSucceeded(token: string, id?: string): TokenOutcome {
  return { token, ok: true, id };
}

export function tokenFailed(token: string, failure: ProviderError, invalid = false): TokenOutcome {
  return { token, ok: false, invalid, error: failure.message, failure };
}

export function requireTargets(targets: string[], providerId: string): string[] {
  const tokens = [...new Set(targets.filter((token) => token.trim() !== ''))];
  if (tokens.length === 0) throw new ProviderError(`${providerId}: the subscriber has no device tokens`, false);
  return tokens;
}

/**
 * Per-token outcomes as a SendResult. When no token got through and none was reported invalid, the failure
 * is the request's (bad credentials, vendor down), so it is thrown, keeping its retryable judgement:
 * retrying then cannot send anything twice.
 */
export function settleTokenOutcomes(outcomes: TokenOutcome[], raw?: string): SendResult {
  const nothingDelivered = outcomes.every((outcome) => !outcome.ok && !outcome.invalid);
  const firstFailure = outcomes.find((outcome) => outcome.failure)?.failure;
  if (nothingDelivered && firstFailure) throw firstFailure;
  return {
    id: outcomes.find((outcome) => outcome.ok && outcome.id)?.id,
    date: new Date().toISOString(),
    raw,
    tokenResults: outcomes.map(({ token, ok, invalid, error }) => ({
      token,
      ok,
      ...(invalid ? { invalid } : {}),
      ...(error ? { error } : {}),
    })),
  };
}

/** FCM and some others take only string values in `data`. */
export function stringValues(payload: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(payload)
      .filter(([, value]) => value !== undefined && value !== null)
      .map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
}

/** PEM keys pasted into JSON forms often arrive with literal `\n` sequences. */
export function normalizePem(pem: string): string {
  return pem.replace(/\\n/g, '\n');
}

/** Per-token requests in parallel, but never more than `limit` at once; results keep the input order. */
export async function mapWithConcurrency<T, R>(items: T[], limit: number, map: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await map(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
