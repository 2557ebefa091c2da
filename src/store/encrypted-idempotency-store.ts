import type { IdempotencyRecord, IdempotencyStore } from './ports.js';
import type { SecretBox } from './secret-box.js';

/** Marks a stored answer body as encrypted; bodies stored before this wrapper existed are replayed as they are. */
const ENCRYPTED = 'enc:';

/**
 * Keeps the answers replayed for an Idempotency-Key encrypted at rest, in either store (SQL or Redis). Some answers
 * carry secrets (a webhook endpoint's `secret`, a rotated secret, a new API key): without this, a client that sent a
 * key would leave that secret in plain text in the idempotency table or Redis for the key's lifetime.
 */
export class EncryptedIdempotencyStore implements IdempotencyStore {
  constructor(
    readonly inner: IdempotencyStore,
    private readonly box: SecretBox,
  ) {}

  async claim(record: IdempotencyRecord, now: string): ReturnType<IdempotencyStore['claim']> {
    const outcome = await this.inner.claim(record, now);
    if (!outcome.claimed) return { claimed: false, existing: this.opened(outcome.existing) };
    return outcome.resumed ? { claimed: true, resumed: this.opened(outcome.resumed) } : outcome;
  }

  renew(claims: Array<{ environmentId: string; key: string }>, leaseExpiresAt: string): Promise<void> {
    return this.inner.renew(claims, leaseExpiresAt);
  }

  complete(environmentId: string, key: string, response: { status: number; body: string; headers: Record<string, string> }): Promise<void> {
    return this.inner.complete(environmentId, key, { ...response, body: ENCRYPTED + this.box.encrypt(response.body) });
  }

  release(environmentId: string, key: string): Promise<void> {
    return this.inner.release(environmentId, key);
  }

  private opened(record: IdempotencyRecord): IdempotencyRecord {
    const body = record.responseBody;
    if (body === undefined || !body.startsWith(ENCRYPTED)) return record;
    return { ...record, responseBody: this.box.decrypt(body.slice(ENCRYPTED.length)) };
  }
}
