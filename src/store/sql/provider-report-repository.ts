import type { Kysely } from 'kysely';
import type { ProviderReportRepository } from '../ports.js';
import type { Database } from './schema.js';

/** provider_reports (migration 0021): the primary key makes a second claim of one event id a no-op. */
export class SqlProviderReportRepository implements ProviderReportRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async claim(environmentId: string, integrationId: string, eventId: string, at: string): Promise<boolean> {
    const result = await this.db
      .insertInto('provider_reports')
      .values({ environment_id: environmentId, integration_id: integrationId, event_id: eventId, created_at: at })
      .onConflict((oc) => oc.columns(['environment_id', 'integration_id', 'event_id']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }
}
