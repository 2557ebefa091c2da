import type { Kysely, Selectable } from 'kysely';
import type { DeliverySchedule } from '../../domain/delivery-schedule.js';
import type { ChannelSwitches, GlobalPreference, WorkflowPreference } from '../../domain/preferences.js';
import type { SubscriberPreferenceRepository, SubscriberPreferences } from '../ports.js';
import type { Database, SubscriberPreferencesTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { fromJson, toJson } from './json.js';
import { ReusableQuery } from './reusable-query.js';

/** The global row's `workflow_id`. */
const GLOBAL = '';

/** Preference rows keyed (environment, subscriber, workflow); see SubscriberPreferencesTable. */
export class SqlPreferenceRepository implements SubscriberPreferenceRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {}

  async listForSubscriber(environmentId: string, subscriberInternalId: string): Promise<SubscriberPreferences> {
    const rows = await this.db
      .selectFrom('subscriber_preferences')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('subscriber_id', '=', subscriberInternalId)
      .execute();
    return preferencesOf(rows);
  }

  async getForDelivery(
    environmentId: string,
    subscriberInternalId: string,
    workflowInternalId: string,
  ): Promise<{ global?: GlobalPreference; workflow?: WorkflowPreference }> {
    const { rows } = await globalAndWorkflowRows.execute(this.db, this.options.dialect, { environmentId, subscriberInternalId, workflowInternalId });
    const found = preferencesOf(rows as Array<Selectable<SubscriberPreferencesTable>>);
    return { global: found.global, workflow: found.workflows[workflowInternalId] };
  }

  async saveGlobal(environmentId: string, subscriberInternalId: string, record: GlobalPreference, at: string): Promise<void> {
    await this.upsert(environmentId, subscriberInternalId, GLOBAL, record, record.schedule, at);
  }

  async saveWorkflow(environmentId: string, subscriberInternalId: string, workflowInternalId: string, record: WorkflowPreference, at: string): Promise<void> {
    await this.upsert(environmentId, subscriberInternalId, workflowInternalId, record, undefined, at);
  }

  async deleteForSubscriber(environmentId: string, subscriberInternalId: string): Promise<void> {
    await this.db.deleteFrom('subscriber_preferences').where('environment_id', '=', environmentId).where('subscriber_id', '=', subscriberInternalId).execute();
  }

  private async upsert(
    environmentId: string,
    subscriberId: string,
    workflowId: string,
    record: { enabled?: boolean; channels: ChannelSwitches },
    schedule: DeliverySchedule | undefined,
    at: string,
  ): Promise<void> {
    const values = {
      enabled: record.enabled === undefined ? null : record.enabled ? 1 : 0,
      channels: toJson(record.channels),
      schedule: schedule === undefined ? null : toJson(schedule),
      updated_at: at,
    };
    await this.db
      .insertInto('subscriber_preferences')
      .values({ environment_id: environmentId, subscriber_id: subscriberId, workflow_id: workflowId, created_at: at, ...values })
      .onConflict((conflict) => conflict.columns(['environment_id', 'subscriber_id', 'workflow_id']).doUpdateSet(values))
      .execute();
  }
}

function preferencesOf(rows: Array<Selectable<SubscriberPreferencesTable>>): SubscriberPreferences {
  const preferences: SubscriberPreferences = { workflows: {} };
  for (const row of rows) {
    const base = {
      ...(row.enabled === null ? {} : { enabled: Number(row.enabled) === 1 }),
      channels: fromJson<ChannelSwitches>(row.channels, {}),
      updatedAt: row.updated_at,
    };
    if (row.workflow_id === GLOBAL) {
      const schedule = fromJson<DeliverySchedule | null>(row.schedule, null);
      preferences.global = schedule ? { ...base, schedule } : base;
    } else {
      preferences.workflows[row.workflow_id] = base;
    }
  }
  return preferences;
}

// Before every channel step: the global row and the workflow's row, one range of the primary key.
const globalAndWorkflowRows = new ReusableQuery((db, p: { environmentId: string; subscriberInternalId: string; workflowInternalId: string }) =>
  db
    .selectFrom('subscriber_preferences')
    .selectAll()
    .where('environment_id', '=', p.environmentId)
    .where('subscriber_id', '=', p.subscriberInternalId)
    .where('workflow_id', 'in', [GLOBAL, p.workflowInternalId]),
);
