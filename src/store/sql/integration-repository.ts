import type { Kysely, Selectable } from 'kysely';
import { ConflictError } from '../../domain/errors.js';
import type {
  Credentials,
  DeliveryChannel,
  Integration,
  IntegrationConfigurations,
  IntegrationKind,
  StepFilter,
} from '../../domain/types.js';
import type { IntegrationRepository } from '../ports.js';
import { fromFlag, fromJson, toFlag, toJson } from './json.js';
import type { Database, IntegrationsTable } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';
import { NOT_DELETED } from './live-rows.js';

type IntegrationRow = Selectable<IntegrationsTable>;

/** Where configurations.inboundWebhookSigningKey is kept, encrypted, in the stored JSON. */
const SEALED_SIGNING_KEY = 'inboundWebhookSigningKeySealed';

/**
 * Integrations over Kysely. Credentials only ever reach the database as `secretBox.encryptJson(...)`
 * in `credentials_enc`; every other field is stored in the clear. `get` also returns soft-deleted
 * records (their `deleted` flag says so); `list` and `findByIdentifier` see only live ones.
 */
export class SqlIntegrationRepository implements IntegrationRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: SqlStoreOptions,
  ) {}

  async create(integration: Integration): Promise<void> {
    try {
      await this.db.insertInto('integrations').values(this.toRow(integration)).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateIdentifier(integration.identifier);
      throw error;
    }
  }

  async get(environmentId: string, id: string): Promise<Integration | undefined> {
    const row = await this.db
      .selectFrom('integrations')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && this.toIntegration(row);
  }

  async list(environmentId: string, filter: { channel?: DeliveryChannel; activeOnly?: boolean } = {}): Promise<Integration[]> {
    let query = this.db
      .selectFrom('integrations')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('deleted', '=', NOT_DELETED);
    if (filter.channel) query = query.where('channel', '=', filter.channel);
    if (filter.activeOnly) query = query.where('active', '=', 1);
    const rows = await query.orderBy('created_at').orderBy('id').execute();
    return rows.map((row) => this.toIntegration(row));
  }

  async findByIdentifier(environmentId: string, identifier: string): Promise<Integration | undefined> {
    const row = await this.db
      .selectFrom('integrations')
      .selectAll()
      .where('environment_id', '=', environmentId)
      .where('identifier', '=', identifier)
      .where('deleted', '=', NOT_DELETED)
      .executeTakeFirst();
    return row && this.toIntegration(row);
  }

  async save(integration: Integration): Promise<void> {
    const { id: _id, environment_id: _env, organization_id: _org, created_at: _created, ...changes } = this.toRow(integration);
    try {
      await this.db
        .updateTable('integrations')
        .set(changes)
        .where('environment_id', '=', integration._environmentId)
        .where('id', '=', integration._id)
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicateIdentifier(integration.identifier);
      throw error;
    }
  }

  private toRow(integration: Integration): IntegrationRow {
    return {
      id: integration._id,
      environment_id: integration._environmentId,
      organization_id: integration._organizationId,
      name: integration.name,
      identifier: integration.identifier,
      provider_id: integration.providerId,
      channel: integration.channel ?? null,
      kind: integration.kind,
      credentials_enc: this.options.secretBox.encryptJson(integration.credentials ?? {}),
      configurations: toJson(this.sealConfigurations(integration.configurations ?? {})),
      active: toFlag(integration.active),
      deleted: toFlag(integration.deleted),
      deleted_at: integration.deletedAt ?? null,
      deleted_by: integration.deletedBy ?? null,
      is_primary: toFlag(integration.primary),
      priority: integration.priority,
      conditions: toJson(integration.conditions ?? []),
      created_at: integration.createdAt,
      updated_at: integration.updatedAt,
    };
  }

  /**
   * The inbound-report signing key is a secret like the credentials: stored encrypted under SEALED_SIGNING_KEY (a
   * value sent under that name is dropped, so only what this class wrote is ever decrypted).
   */
  private sealConfigurations(configurations: IntegrationConfigurations): Record<string, unknown> {
    const { inboundWebhookSigningKey, [SEALED_SIGNING_KEY]: _sent, ...rest } = configurations as IntegrationConfigurations & Record<string, unknown>;
    if (typeof inboundWebhookSigningKey !== 'string') return rest;
    return { ...rest, [SEALED_SIGNING_KEY]: this.options.secretBox.encrypt(inboundWebhookSigningKey) };
  }

  private openConfigurations(stored: IntegrationConfigurations & Record<string, unknown>): IntegrationConfigurations {
    const { [SEALED_SIGNING_KEY]: sealed, ...rest } = stored;
    // Rows written before 0021 hold the key in the clear; they are read as they are.
    return typeof sealed === 'string' ? { ...rest, inboundWebhookSigningKey: this.options.secretBox.decrypt(sealed) } : rest;
  }

  private toIntegration(row: IntegrationRow): Integration {
    const integration: Integration = {
      _id: row.id,
      _environmentId: row.environment_id,
      _organizationId: row.organization_id,
      name: row.name,
      identifier: row.identifier,
      providerId: row.provider_id,
      ...(row.channel ? { channel: row.channel as DeliveryChannel } : {}),
      kind: row.kind as IntegrationKind,
      credentials: this.options.secretBox.decryptJson<Credentials>(row.credentials_enc),
      configurations: this.openConfigurations(fromJson<IntegrationConfigurations & Record<string, unknown>>(row.configurations, {})),
      active: fromFlag(row.active),
      deleted: fromFlag(row.deleted),
      primary: fromFlag(row.is_primary),
      priority: Number(row.priority),
      conditions: fromJson<StepFilter[]>(row.conditions, []),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
    if (row.deleted_at) integration.deletedAt = row.deleted_at;
    if (row.deleted_by) integration.deletedBy = row.deleted_by;
    return integration;
  }
}

function duplicateIdentifier(identifier: string): ConflictError {
  return new ConflictError(`Integration with identifier ${identifier} already exists`);
}

/** The unique (environment, identifier) index: SQLite and PostgreSQL report it differently. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
