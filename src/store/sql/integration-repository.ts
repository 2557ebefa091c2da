import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';

/** Placeholder until the owning engineer implements IntegrationRepository (see store/ports.ts). */
export class SqlIntegrationRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {}
}
