import { TemplateSnapshots } from './template-snapshots.js';
import { sql, type Kysely } from 'kysely';
import type { Store } from '../ports.js';
import type { SecretBox } from '../secret-box.js';
import type { Database } from './schema.js';
import { SqlTenancyRepository } from './tenancy-repository.js';
import { SqlIntegrationRepository } from './integration-repository.js';
import { SqlSubscriberRepository } from './subscriber-repository.js';
import { SqlMessageRepository } from './message-repository.js';
import type { MessageText, MessageTextHoldingDocument } from '../../domain/stored-message.js';
import { ONE_STATEMENT_MAX_PARAMETERS, SqlNotificationRepository } from './notification-repository.js';
import { SqlJobRepository } from './job-repository.js';
import type { WorkflowCache } from './workflow-cache.js';
import { SqlWorkflowRepository } from './workflow-repository.js';
import { SqlTopicRepository } from './topic-repository.js';
import { SqlTriggerRepository } from './trigger-repository.js';
import { SqlDashboardRepository } from './dashboard-repository.js';
import { SqlPreferenceRepository } from './preference-repository.js';
import { SqlProviderReportRepository } from './provider-report-repository.js';
import { SqlEventOutbox, SqlWebhookRepository, WebhookPresence } from './webhook-repository.js';
import { systemClock, type Clock } from '../../domain/clock.js';
import { SqlBridgeRepository } from './bridge-repository.js';
import { SqlRetentionRepository } from './retention-repository.js';
import { SqlOverviewRepository } from './overview-repository.js';
import { HeldWrites } from './held-store.js';
import { HeldStatementBatches } from './held-statement-batches.js';
import { synchronousWriterOf } from './snapshot-reads.js';

export type SqlDialectName = 'sqlite' | 'postgres';

export interface SqlStoreOptions {
  dialect: SqlDialectName;
  secretBox: SecretBox;
  /**
   * Up to this many jobs in a status filter's partial index, the event list starts from them (default 5000; see
   * SqlNotificationRepository.fewIndexed). Tests set 0 to run the other plan on small data.
   */
  fewIndexedStatusJobs?: number;
  /**
   * From which offset a page of the event list with time bounds only skips whole seconds (default SEEK_FROM_OFFSET on
   * PostgreSQL, SQLITE_SEEK_FROM_OFFSET on SQLite; see SqlNotificationRepository.listPage). Tests set 0 to run it on
   * small data.
   */
  seekFromOffset?: number;
  /**
   * SQLite: from how many events in a page's second its deep page is found by the second's tenths (default
   * TENTHS_FROM_EVENTS; see sqliteSeek in notification-repository.ts). Tests set 1 to run it on small data.
   */
  tenthsFromEvents?: number;
  /** Time of recorded domain events (default the system clock). */
  clock?: Clock;
  /** The per-process cache of which environments have webhook endpoints; one is made when absent. */
  webhookPresence?: WebhookPresence;
  /** The per-process cache of workflows by environment and id (none: every read goes to the database); see WorkflowCache. */
  workflowCache?: WorkflowCache;
  /**
   * Writes each message's list text, kept with the message (MessagesTable.list_text). Without one, message writes
   * leave the text NULL, and the list writes those messages from their columns and document.
   */
  messageText?: MessageText;
  /**
   * Writes the list text as messageText does, and tells whether it holds the whole document: such a row keeps the text
   * alone (document ''). Used instead of messageText when set.
   */
  messageTextHoldingDocument?: MessageTextHoldingDocument;
  /** The per-process cache of message workflow snapshots (migration 0031); one is made when absent. */
  templateSnapshots?: TemplateSnapshots;
}

/**
 * The Store over Kysely, identical for SQLite and PostgreSQL. A Store made inside `transaction()`
 * shares the transaction; nested calls reuse it rather than opening savepoints.
 */
export class SqlStore implements Store {
  readonly tenancy: SqlTenancyRepository;
  readonly integrations: SqlIntegrationRepository;
  readonly subscribers: SqlSubscriberRepository;
  readonly messages: SqlMessageRepository;
  readonly notifications: SqlNotificationRepository;
  readonly jobs: SqlJobRepository;
  readonly workflows: SqlWorkflowRepository;
  readonly topics: SqlTopicRepository;
  readonly triggers: SqlTriggerRepository;
  readonly dashboard: SqlDashboardRepository;
  readonly preferences: SqlPreferenceRepository;
  readonly providerReports: SqlProviderReportRepository;
  readonly webhooks: SqlWebhookRepository;
  readonly events: SqlEventOutbox;
  readonly bridge: SqlBridgeRepository;
  readonly retention: SqlRetentionRepository;
  readonly overview: SqlOverviewRepository;

  constructor(
    readonly db: Kysely<Database>,
    readonly options: SqlStoreOptions,
    private readonly inTransaction = false,
  ) {
    this.tenancy = new SqlTenancyRepository(db, options.secretBox);
    this.integrations = new SqlIntegrationRepository(db, options);
    this.subscribers = new SqlSubscriberRepository(db, options);
    // Made once per top-level store and shared by its transaction-bound stores (they receive the same options).
    options.templateSnapshots ??= new TemplateSnapshots();
    this.messages = new SqlMessageRepository(db, options);
    this.notifications = new SqlNotificationRepository(db, options);
    this.jobs = new SqlJobRepository(db, options);
    this.workflows = new SqlWorkflowRepository(db, options);
    this.topics = new SqlTopicRepository(db, options);
    this.triggers = new SqlTriggerRepository(db, options, inTransaction);
    this.dashboard = new SqlDashboardRepository(db);
    this.preferences = new SqlPreferenceRepository(db, options);
    this.providerReports = new SqlProviderReportRepository(db);
    // Made once per top-level store and shared by its transaction-bound stores (they receive the same options).
    options.webhookPresence ??= new WebhookPresence(1000);
    const webhookOptions = { dialect: options.dialect, secretBox: options.secretBox, presence: options.webhookPresence, clock: options.clock ?? systemClock };
    this.webhooks = new SqlWebhookRepository(db, webhookOptions);
    this.events = new SqlEventOutbox(db, this.webhooks, webhookOptions);
    this.bridge = new SqlBridgeRepository(db, options.secretBox);
    this.retention = new SqlRetentionRepository(db, options);
    this.overview = new SqlOverviewRepository(db, options.dialect);
  }

  async transaction<T>(work: (store: Store) => Promise<T>): Promise<T> {
    if (this.inTransaction) return work(this);
    return this.db.transaction().execute((trx) => work(new SqlStore(trx, this.options, true)));
  }

  readonly holdsWrites = false;

  private heldBatches?: HeldStatementBatches;

  /** PostgreSQL: the process's held writes, sharing statements under load (one per top-level store). */
  get heldStatements(): HeldStatementBatches {
    return (this.heldBatches ??= new HeldStatementBatches(this.db, ONE_STATEMENT_MAX_PARAMETERS));
  }

  async batch<T>(work: (store: Store) => Promise<T>): Promise<T> {
    if (this.inTransaction) return work(this);
    // SQLite: held and written as one synchronous block (where the database offers one: not a transaction's).
    const writer = this.options.dialect === 'sqlite' ? synchronousWriterOf(this.db) : undefined;
    if (this.options.dialect !== 'postgres' && !writer) return work(this);
    const held = new HeldWrites(this, writer);
    const result = await work(held.store);
    await held.flush();
    return result;
  }

  async lockKey(key: string): Promise<void> {
    if (!this.inTransaction) throw new Error('lockKey() needs a transaction');
    if (this.options.dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(this.db);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    if (!this.inTransaction) await this.db.destroy();
  }
}
