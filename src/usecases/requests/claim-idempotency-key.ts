import { createHash, randomUUID } from 'node:crypto';
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
  /** `seed`: the same on every run of this request, a takeover after a crash included (see IdempotencyRecord). */
  | { kind: 'claimed'; seed: string; resumed: boolean }
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
 * the key reused for another request is a 422. The claim holds a lease of `config.idempotencyLeaseMs` that the
 * caller renews while the request runs (renewIdempotencyClaims): a claim left by a process that died lapses, and the
 * next repeat takes it over and runs the request again with the first run's seed.
 */
export async function claimIdempotencyKey(
  deps: Pick<Deps, 'config' | 'clock' | 'idempotency'>,
  input: ClaimIdempotencyKeyInput,
): Promise<ClaimOutcome> {
  assertIdempotencyKey(input.key);
  const nowMs = deps.clock.now();
  const bodyHash = input.bodyHash;
  const seed = randomUUID();
  const result = await deps.idempotency.claim(
    {
      environmentId: input.environmentId,
      key: input.key,
      method: input.method,
      path: input.path,
      bodyHash,
      state: 'in_progress',
      expiresAt: new Date(nowMs + deps.config.idempotencyTtlSeconds * 1000).toISOString(),
      leaseExpiresAt: leaseUntil(deps, nowMs),
      seed,
    },
    new Date(nowMs).toISOString(),
  );
  if (result.claimed) return { kind: 'claimed', seed: result.resumed?.seed ?? seed, resumed: result.resumed !== undefined };

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

function leaseUntil(deps: Pick<Deps, 'config'>, nowMs: number): string {
  return new Date(nowMs + deps.config.idempotencyLeaseMs).toISOString();
}

/** The heartbeat of running keyed requests: extends the leases of the claims this process holds. */
export async function renewIdempotencyClaims(
  deps: Pick<Deps, 'config' | 'clock' | 'idempotency'>,
  claims: Array<{ environmentId: string; key: string }>,
): Promise<void> {
  if (claims.length === 0) return;
  await deps.idempotency.renew(claims, leaseUntil(deps, deps.clock.now()));
}
