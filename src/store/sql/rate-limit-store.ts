import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { RateLimitStore } from '../ports.js';
import type { SqlDialectName } from './sql-store.js';

/** Placeholder until its owner implements the SQL rate-limit counters. */
export class SqlRateLimitStore implements RateLimitStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlDialectName,
  ) {}
  async hit(): Promise<number> {
    throw new Error('not implemented');
  }
}
