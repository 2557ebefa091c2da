import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { IdempotencyRecord, IdempotencyStore } from '../ports.js';

/** Placeholder until its owner implements the SQL idempotency store. */
export class SqlIdempotencyStore implements IdempotencyStore {
  constructor(private readonly db: Kysely<Database>) {}
  async claim(_record: IdempotencyRecord, _now: string): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRecord }> {
    throw new Error('not implemented');
  }
  async complete(): Promise<void> {
    throw new Error('not implemented');
  }
  async release(): Promise<void> {
    throw new Error('not implemented');
  }
}
