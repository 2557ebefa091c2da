import type { Kysely } from 'kysely';
import { newApplicationIdentifier } from '../../domain/ids.js';
import type { Environment, Organization } from '../../domain/types.js';
import type { ApiKeyRecord, TenancyRepository } from '../ports.js';
import type { SecretBox } from '../secret-box.js';
import type { Database } from './schema.js';

export class SqlTenancyRepository implements TenancyRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly secretBox: SecretBox,
  ) {}

  async createOrganization(org: Organization): Promise<void> {
    await this.db.insertInto('organizations').values({ id: org._id, name: org.name, created_at: org.createdAt }).execute();
  }

  async createEnvironment(env: Omit<Environment, 'identifier'> & { identifier?: string }): Promise<void> {
    await this.db
      .insertInto('environments')
      .values({
        id: env._id,
        organization_id: env._organizationId,
        name: env.name,
        identifier: env.identifier ?? newApplicationIdentifier(),
        created_at: env.createdAt,
      })
      .execute();
  }

  async listEnvironments(): Promise<Environment[]> {
    const rows = await this.db.selectFrom('environments').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(toEnvironment);
  }

  async getEnvironment(id: string): Promise<Environment | undefined> {
    const row = await this.db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toEnvironment(row);
  }

  async findEnvironmentByName(name: string): Promise<Environment | undefined> {
    const row = await this.db.selectFrom('environments').selectAll().where('name', '=', name).orderBy('created_at').executeTakeFirst();
    return row && toEnvironment(row);
  }

  async findEnvironmentByIdentifier(identifier: string): Promise<Environment | undefined> {
    const row = await this.db.selectFrom('environments').selectAll().where('identifier', '=', identifier).executeTakeFirst();
    return row && toEnvironment(row);
  }

  async createApiKey(input: { id: string; environmentId: string; keyHash: string; secretKey?: string; createdAt: string }): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        id: input.id,
        environment_id: input.environmentId,
        key_hash: input.keyHash,
        key_enc: input.secretKey === undefined ? null : this.secretBox.encrypt(input.secretKey),
        // The listing's last four characters, for every key made (first start and `herald keys create` included).
        hint: input.secretKey === undefined ? null : input.secretKey.slice(-4),
        created_at: input.createdAt,
      })
      .execute();
  }

  async backfillApiKeyHints(): Promise<number> {
    const rows = await this.db.selectFrom('api_keys').select(['id', 'key_enc']).where('hint', 'is', null).where('key_enc', 'is not', null).execute();
    for (const row of rows) {
      await this.db.updateTable('api_keys').set({ hint: this.secretBox.decrypt(row.key_enc as string).slice(-4) }).where('id', '=', row.id).execute();
    }
    return rows.length;
  }

  async listHmacKeys(environmentId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select('key_enc')
      .where('environment_id', '=', environmentId)
      .where('key_enc', 'is not', null)
      // A revoked key no longer signs anything, Inbox HMACs included.
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    return rows.map((row) => this.secretBox.decrypt(row.key_enc as string));
  }

  async countApiKeys(environmentId: string): Promise<{ total: number; hmacCapable: number }> {
    const rows = await this.db.selectFrom('api_keys').select('key_enc').where('environment_id', '=', environmentId).where('revoked_at', 'is', null).execute();
    return { total: rows.length, hmacCapable: rows.filter((row) => row.key_enc !== null).length };
  }

  async findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('environments', 'environments.id', 'api_keys.environment_id')
      .select(['api_keys.id as id', 'api_keys.environment_id as environmentId', 'environments.organization_id as organizationId'])
      .where('api_keys.key_hash', '=', keyHash)
      .where('api_keys.revoked_at', 'is', null)
      .executeTakeFirst();
    return row;
  }

  async getSetting(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  async putSettingIfAbsent(key: string, value: string): Promise<string> {
    await this.db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
    return (await this.getSetting(key)) as string;
  }
}

function toEnvironment(row: Database['environments']): Environment {
  return { _id: row.id, _organizationId: row.organization_id, name: row.name, identifier: row.identifier, createdAt: row.created_at };
}
