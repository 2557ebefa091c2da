import { createHash } from 'node:crypto';
import { ConflictError, UnprocessableError, ValidationError } from '../../domain/errors.js';
import type { Deps } from '../deps.js';

export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export interface ClaimIdempotencyKeyInput {
  environmentId: string;
  key: string;
  method: string;
  /** The request path with its query string: `?failIfExists=true` is another request. */
  path: string;
  /** `hashRequestBody` of the body as the client sent it (before schema defaults or coercion). */
  bodyHash: string;
}

export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string; headers: Record<string, string> };

/** JSON with object keys sorted at every level, so key order and whitespace never change the hash. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

export function hashRequestBody(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body), 'utf8').digest('hex');
}

export function assertIdempotencyKey(key: string): void {
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ValidationError([`idempotency-key must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${key.length}`]);
  }
}

/**
 * The first request with a key claims it (API-CONVENTIONS.md, Idempotency-Key) and runs; a repeat of
 * the same method, path and body replays the stored answer, or is a 409 while the first still runs;
 * the key reused for another request is a 422.
 */
export async function claimIdempotencyKey(
  deps: Pick<Deps, 'config' | 'clock' | 'idempotency'>,
  input: ClaimIdempotencyKeyInput,
): Promise<ClaimOutcome> {
  assertIdempotencyKey(input.key);
  const nowMs = deps.clock.now();
  const bodyHash = input.bodyHash;
  const result = await deps.idempotency.claim(
    {
      environmentId: input.environmentId,
      key: input.key,
      method: input.method,
      path: input.path,
      bodyHash,
      state: 'in_progress',
      expiresAt: new Date(nowMs + deps.config.idempotencyTtlSeconds * 1000).toISOString(),
    },
    new Date(nowMs).toISOString(),
  );
  if (result.claimed) return { kind: 'claimed' };

  const existing = result.existing;
  if (existing.method !== input.method || existing.path !== input.path || existing.bodyHash !== bodyHash) {
    throw new UnprocessableError(`Idempotency-Key "${input.key}" was already used with another method, path or body`, {
      'idempotency-key': {
        messages: [`the key was first used for ${existing.method} ${existing.path} with another body; use a new key for a new request`],
        value: input.key,
      },
    });
  }
  if (existing.state !== 'done' || existing.responseStatus === undefined) {
    throw new ConflictError(`A request with Idempotency-Key "${input.key}" is still being processed; retry later`, 1);
  }
  return { kind: 'replay', status: existing.responseStatus, body: existing.responseBody ?? '', headers: existing.responseHeaders ?? {} };
}
