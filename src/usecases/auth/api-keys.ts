import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../../domain/ids.js';
import { isoNow } from '../../domain/clock.js';
import { NotFoundError } from '../../domain/errors.js';
import type { Deps } from '../deps.js';

/** API keys are stored as sha256 hashes: a leaked database does not leak usable keys. */
export function hashApiKey(secretKey: string): string {
  return createHash('sha256').update(secretKey, 'utf8').digest('hex');
}

/** 32 random bytes as hex, the length and alphabet of the secret keys Novu clients send. */
export function generateSecretKey(): string {
  return randomBytes(32).toString('hex');
}

export interface CreateApiKeyInput {
  environmentName: string;
  /** Use this value instead of a random one (bootstrap automation). */
  secretKey?: string;
}

/**
 * Creates a key for the named environment and returns the secret. It is stored hashed (authentication) and
 * encrypted with the master key (to verify Inbox `subscriberHash` HMACs), never in plaintext.
 */
export async function createApiKey(deps: Pick<Deps, 'store' | 'clock'>, input: CreateApiKeyInput): Promise<{ secretKey: string; environmentId: string }> {
  const environment = await deps.store.tenancy.findEnvironmentByName(input.environmentName);
  if (!environment) throw new NotFoundError(`Environment ${input.environmentName} not found`);
  const secretKey = input.secretKey ?? generateSecretKey();
  await deps.store.tenancy.createApiKey({
    id: newId(deps.clock.now()),
    environmentId: environment._id,
    keyHash: hashApiKey(secretKey),
    secretKey,
    createdAt: isoNow(deps.clock),
  });
  return { secretKey, environmentId: environment._id };
}
