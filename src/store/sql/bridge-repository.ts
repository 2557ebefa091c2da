import type { Kysely } from 'kysely';
import type { Workflow } from '../../domain/workflow.js';
import type { BridgeEndpoint, BridgeRepository } from '../ports.js';
import type { SecretBox } from '../secret-box.js';
import type { Database } from './schema.js';
import { fromJson, toJson } from './json.js';
import { NOT_DELETED } from './live-rows.js';

/** The framework bridge of each environment, its signing key, and control values edited outside the code. */
export class SqlBridgeRepository implements BridgeRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretBox: SecretBox,
  ) {}

  async getEndpoint(environmentId: string): Promise<BridgeEndpoint | undefined> {
    const row = await this.db.selectFrom('bridge_endpoints').selectAll().where('environment_id', '=', environmentId).executeTakeFirst();
    return row && { environmentId: row.environment_id, url: row.url, apiKeyId: row.api_key_id ?? undefined, syncedAt: row.synced_at };
  }

  async saveEndpoint(endpoint: BridgeEndpoint): Promise<void> {
    const values = { url: endpoint.url, api_key_id: endpoint.apiKeyId ?? null, synced_at: endpoint.syncedAt };
    await this.db
      .insertInto('bridge_endpoints')
      .values({ environment_id: endpoint.environmentId, ...values })
      .onConflict((oc) => oc.column('environment_id').doUpdateSet(values))
      .execute();
  }

  async signingKey(environmentId: string, apiKeyId?: string): Promise<string | undefined> {
    let query = this.db
      .selectFrom('api_keys')
      .select(['id', 'key_enc'])
      .where('environment_id', '=', environmentId)
      .where('key_enc', 'is not', null)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc');
    if (apiKeyId) {
      const own = await query.where('id', '=', apiKeyId).executeTakeFirst();
      if (own?.key_enc) return this.secretBox.decrypt(own.key_enc);
    }
    query = query.limit(1);
    const newest = await query.executeTakeFirst();
    return newest?.key_enc ? this.secretBox.decrypt(newest.key_enc) : undefined;
  }

  async listExternalWorkflows(environmentId: string): Promise<Workflow[]> {
    const rows = await this.db
      .selectFrom('workflows')
      .select('document')
      .where('environment_id', '=', environmentId)
      .where('deleted', '=', NOT_DELETED)
      .where('origin', '=', 'external')
      .orderBy('created_at', 'asc')
      .execute();
    return rows.map((row) => fromJson<Workflow>(row.document, {} as Workflow));
  }

  async getControls(environmentId: string, workflowId: string, stepId: string): Promise<Record<string, unknown> | undefined> {
    const row = await this.db
      .selectFrom('bridge_controls')
      .select('controls')
      .where('environment_id', '=', environmentId)
      .where('workflow_id', '=', workflowId)
      .where('step_id', '=', stepId)
      .executeTakeFirst();
    return row ? fromJson<Record<string, unknown>>(row.controls, {}) : undefined;
  }

  async saveControls(environmentId: string, workflowId: string, stepId: string, controls: Record<string, unknown>, at: string): Promise<void> {
    await this.db
      .insertInto('bridge_controls')
      .values({ environment_id: environmentId, workflow_id: workflowId, step_id: stepId, controls: toJson(controls), updated_at: at })
      .onConflict((oc) => oc.columns(['environment_id', 'workflow_id', 'step_id']).doUpdateSet({ controls: toJson(controls), updated_at: at }))
      .execute();
  }

  async deleteControls(environmentId: string, workflowId: string): Promise<void> {
    await this.db.deleteFrom('bridge_controls').where('environment_id', '=', environmentId).where('workflow_id', '=', workflowId).execute();
  }
}
