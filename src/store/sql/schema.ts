import type { Generated } from 'kysely';

/**
 * Kysely table types, valid on SQLite and PostgreSQL alike. Conventions that keep one set of queries
 * working on both: ids are 24-hex text; timestamps are ISO 8601 UTC text (sortable as strings);
 * booleans are integers 0/1; JSON documents are text. Mappers in the repositories convert to domain types.
 */
export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface EnvironmentsTable {
  id: string;
  organization_id: string;
  name: string;
  /** Public application identifier; unique (migration 0010 backfilled existing rows). */
  identifier: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  environment_id: string;
  /** sha256 hex of the secret key; the key itself is never stored. */
  key_hash: string;
  /** AES-256-GCM ciphertext of the key (secret-box.ts), kept to verify Inbox HMACs; null for keys made before 0010. */
  key_enc: string | null;
  created_at: string;
  /** The key's last four characters, for telling keys apart in the dashboard (keys made before 0014: null). */
  hint: string | null;
  /** Set when revoked: the key no longer authenticates. */
  revoked_at: string | null;
  created_by: string | null;
}

export interface IntegrationsTable {
  id: string;
  environment_id: string;
  organization_id: string;
  name: string;
  identifier: string;
  provider_id: string;
  channel: string | null;
  kind: string;
  /** AES-256-GCM ciphertext of the credentials JSON (see store/secret-box.ts). */
  credentials_enc: string;
  configurations: string;
  active: number;
  deleted: number;
  deleted_at: string | null;
  deleted_by: string | null;
  is_primary: number;
  priority: number;
  conditions: string;
  created_at: string;
  updated_at: string;
}

export interface SubscribersTable {
  id: string;
  environment_id: string;
  organization_id: string;
  subscriber_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  avatar: string | null;
  locale: string | null;
  timezone: string | null;
  data: string | null;
  channels: string;
  topics: string;
  is_online: number | null;
  last_online_at: string | null;
  version: number;
  deleted: number;
  created_at: string;
  updated_at: string;
}

export interface WorkflowsTable {
  id: string;
  environment_id: string;
  organization_id: string;
  /** The trigger identifier (`workflowId`, also the slug). Unique per environment among non-deleted. */
  workflow_id: string;
  name: string;
  /** The whole workflow document as JSON (steps, controls, preferences, payload schema, ...). */
  document: string;
  active: number;
  deleted: number;
  created_at: string;
  updated_at: string;
  /** `external` for workflows synced from a framework bridge (migration 0022); null for the others. */
  origin?: string | null;
}

export interface TopicsTable {
  id: string;
  environment_id: string;
  organization_id: string;
  key: string;
  name: string | null;
  created_at: string;
  updated_at: string;
}

export interface TopicSubscriptionsTable {
  id: string;
  environment_id: string;
  topic_id: string;
  topic_key: string;
  subscriber_id: string;
  external_subscriber_id: string;
  created_at: string;
}

export interface NotificationsTable {
  id: string;
  environment_id: string;
  organization_id: string;
  subscriber_id: string;
  /** The external subscriberId, denormalised for the `subscriberIds` filter. */
  external_subscriber_id: string;
  /** The subscriber's email at trigger time, denormalised for the `emails` filter. */
  subscriber_email: string | null;
  template_id: string | null;
  transaction_id: string;
  digested_notification_id: string | null;
  /** Bit set of STEP_TYPES (see store/sql/channel-mask.ts) for the `channels` filter. */
  channels_mask: number;
  severity: string | null;
  /** normalizeContextKeys(contextKeys) for exact, order-insensitive matching. */
  context_keys_norm: string;
  /** The rest of the NotificationEvent document (subscriber, template, payload, controls, to, tags, topics, ...). */
  document: string;
  created_at: string;
  updated_at: string;
}

export interface NotificationTopicsTable {
  notification_id: string;
  environment_id: string;
  topic_id: string;
  topic_key: string;
  subscription_id: string | null;
  /** The event's created_at, so the topicKey list reads its page in index order. Migration 0005. */
  created_at: string;
}

export interface JobsTable {
  id: string;
  environment_id: string;
  organization_id: string;
  notification_id: string;
  subscriber_id: string;
  transaction_id: string;
  template_id: string | null;
  step_index: number;
  type: string;
  status: string;
  provider_id: string;
  /** digest grouping: environment + subscriber + template + step + digestKey value. */
  digest_group: string | null;
  /** The Job document minus executionDetails (step, digest, payload, overrides, ...). */
  document: string;
  created_at: string;
  updated_at: string;
}

export interface ExecutionDetailsTable {
  id: string;
  environment_id: string;
  job_id: string;
  notification_id: string;
  status: string;
  detail: string;
  is_retry: number;
  is_test: number;
  provider_id: string | null;
  raw: string | null;
  source: string;
  created_at: string;
}

export interface MessagesTable {
  id: string;
  environment_id: string;
  organization_id: string;
  notification_id: string;
  subscriber_id: string;
  external_subscriber_id: string;
  template_id: string | null;
  /** The producing job; unique, so a rerun of a step can never create a second message. */
  job_id: string | null;
  transaction_id: string;
  channel: string;
  read: number;
  seen: number;
  status: string;
  context_keys_norm: string;
  deleted: number;
  /** The rest of the Message document (content, cta, subject, payload, overrides, ...). */
  document: string;
  // Inbox filter columns (migration 0011; optional so rows written without them take the column defaults).
  archived?: number;
  /** Set while snoozed (the document's snoozedUntil). */
  snoozed_until?: string | null;
  /** The document's severity, `none` when it has none. */
  severity?: string;
  /** The document's tags as `|a|b|` (domain/inbox.ts tagsColumn), '' when none. */
  tags?: string;
  /** The vendor's message id (the document's `identifier`), for provider delivery reports (migration 0021). */
  provider_message_id?: string | null;
  /**
   * The message as GET /v1/messages writes it, less its subscriber (U+0001 marks where the subscriber record goes),
   * rewritten by every write of the row (migration 0028); NULL for rows written before, or by a store without a
   * writer (SqlStoreOptions.messageText), which the list writes from the columns and document instead.
   */
  list_text?: string | null;
  created_at: string;
  updated_at: string;
}

/** Vendor event ids of provider delivery reports already recorded (migration 0021). */
export interface ProviderReportsTable {
  environment_id: string;
  integration_id: string;
  event_id: string;
  created_at: string;
}

/**
 * Exact totals of non-deleted messages for GET /v1/messages, per scope: `all`, `channel:<channel>`,
 * `subscriber:<external subscriberId>`, `context:<context_keys_norm>`. A total is the SUM over the scope's shards:
 * PostgreSQL writers spread over several rows so concurrent workers do not queue on one row lock; a shard's own
 * count means nothing (it may be negative). Migration 0005; maintained by SqlMessageRepository.
 */
export interface MessageCountersTable {
  environment_id: string;
  scope: string;
  shard: number;
  count: number;
}

/**
 * How many events each environment holds per second of `created_at` (bucket: its first 19 characters), kept by
 * database triggers on notifications (migration 0026 on PostgreSQL, 0027 on SQLite). On PostgreSQL a second is spread
 * over 8 shards (hash of the event id) so concurrent inserts do not queue on one row; SQLite (one writer) uses shard 0.
 */
export interface NotificationBucketsTable {
  environment_id: string;
  bucket: string;
  shard: number;
  n: number;
}

/**
 * SQLite (migration 0033): an environment's events per tenth of a second of created_at (`bucket`: its first 21
 * characters, `2026-11-27T03:17:47.1`), kept by triggers as notification_buckets keeps the seconds. A deep page of the
 * event list finds its second by notification_buckets and then its tenth here, and walks at most that tenth's events.
 * PostgreSQL has the table, empty and never read.
 */
export interface NotificationTenthsTable {
  environment_id: string;
  bucket: string;
  n: number;
}

/**
 * The list entry of an event whose jobs have all ended, as GET /v1/notifications writes it (migration 0029; SQLite
 * only): written by the worker, deleted by triggers on any later write to the event, its jobs or their details.
 */
export interface NotificationTextsTable {
  notification_id: string;
  environment_id: string;
  text: string;
  /** PostgreSQL: the print of the rows the text was written from (eventPrint); null on SQLite. */
  print: string | null;
}

/**
 * One copy of each workflow snapshot messages carry as `template` (migration 0031): a message document holds
 * `"template":"snapshot:<id>"` instead of the snapshot itself (~1.1 KB of every message, twice with its list text).
 * The id is a hash of the text, so a row never changes; rows are never deleted (one per workflow version).
 */
export interface MessageTemplatesTable {
  id: string;
  /** The snapshot as JSON.stringify wrote it. */
  text: string;
}

export interface IdempotencyKeysTable {
  environment_id: string;
  key: string;
  method: string;
  path: string;
  body_hash: string;
  /** 'in_progress' until the first request finishes, then 'done'. */
  state: string;
  response_status: number | null;
  response_body: string | null;
  response_headers: string | null;
  expires_at: string;
  created_at: string;
  /** Migration 0018: the claiming process instance, its lease, and the seed kept across takeovers. */
  owner: string | null;
  lease_expires_at: string | null;
  seed: string | null;
}

export interface RateLimitCountersTable {
  environment_id: string;
  category: string;
  window_start: string;
  count: number;
}

export interface QueueJobsTable {
  id: string;
  name: string;
  payload: string;
  /** ISO time the job may run from. */
  run_at: string;
  attempts: number;
  max_attempts: number;
  /** waiting | active | completed | failed */
  state: string;
  locked_until: string | null;
  last_error: string | null;
  /** An optional caller-chosen key: enqueuing the same key twice is a no-op. */
  dedupe_key: string | null;
  /** First retry delay of this job (EnqueueOptions.backoffMs); null = the queue's default. Migration 0004. */
  backoff_ms: number | null;
  created_at: string;
  updated_at: string;
}

/**
 * One row per accepted trigger (per event of a bulk/broadcast call): written in the same transaction as
 * its queue job, it deduplicates transactionIds and is the durable record that a 201 was given.
 */
export interface TriggersTable {
  id: string;
  environment_id: string;
  organization_id: string;
  transaction_id: string;
  workflow_id: string;
  /** The accepted request: to, payload, overrides, actor, context, ... as JSON. */
  request: string;
  /** accepted | processed | failed | canceled */
  state: string;
  error: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * A subscriber's preference records: one global row (`workflow_id` = '') and one per workflow it changed
 * (`workflow_id` = the workflow's internal id). `channels` is a JSON object of the channels this level decides.
 */
export interface SubscriberPreferencesTable {
  environment_id: string;
  subscriber_id: string;
  workflow_id: string;
  /** 1 / 0, or null when this level does not switch everything. */
  enabled: number | null;
  channels: string;
  /** JSON DeliverySchedule (global row only), or null. */
  schedule: string | null;
  created_at: string;
  updated_at: string;
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** Migration 0024: the overview's counts per environment × UTC hour (`2026-11-25T14`) × channel × provider × workflow × outcome. */
export interface OverviewCountsTable {
  environment_id: string;
  hour: string;
  channel: string;
  /** '' when the step ended before a provider was chosen. */
  provider_id: string;
  /** The workflow's _id; '' when unknown. */
  workflow_id: string;
  outcome: string;
  shard: number;
  count: number;
}

/** Migration 0024: trigger-to-delivery latency per hour and channel, as counts per fixed bucket (domain/overview.ts). */
export interface OverviewLatencyTable {
  environment_id: string;
  hour: string;
  channel: string;
  bucket: number;
  shard: number;
  count: number;
}

export interface Database {
  organizations: OrganizationsTable;
  environments: EnvironmentsTable;
  api_keys: ApiKeysTable;
  integrations: IntegrationsTable;
  subscribers: SubscribersTable;
  workflows: WorkflowsTable;
  topics: TopicsTable;
  topic_subscriptions: TopicSubscriptionsTable;
  notifications: NotificationsTable;
  notification_topics: NotificationTopicsTable;
  jobs: JobsTable;
  execution_details: ExecutionDetailsTable;
  messages: MessagesTable;
  message_counters: MessageCountersTable;
  notification_buckets: NotificationBucketsTable;
  notification_tenths: NotificationTenthsTable;
  notification_texts: NotificationTextsTable;
  message_templates: MessageTemplatesTable;
  provider_reports: ProviderReportsTable;
  idempotency_keys: IdempotencyKeysTable;
  rate_limit_counters: RateLimitCountersTable;
  queue_jobs: QueueJobsTable;
  triggers: TriggersTable;
  settings: SettingsTable;
  subscriber_preferences: SubscriberPreferencesTable;
  users: UsersTable;
  dashboard_sessions: DashboardSessionsTable;
  dashboard_tokens: DashboardTokensTable;
  login_attempts: LoginAttemptsTable;
  audit_log: AuditLogTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_attempts: WebhookAttemptsTable;
  bridge_endpoints: BridgeEndpointsTable;
  bridge_controls: BridgeControlsTable;
  overview_counts: OverviewCountsTable;
  overview_latency: OverviewLatencyTable;
}

/** The framework bridge of an environment (migration 0022). */
export interface BridgeEndpointsTable {
  environment_id: string;
  url: string;
  /** The API key the bridge was synced with: it signs the calls (the bridge app knows that secret). */
  api_key_id: string | null;
  synced_at: string;
}

/** Control values of a step of an external workflow, edited through the API or dashboard (migration 0022). */
export interface BridgeControlsTable {
  environment_id: string;
  /** The trigger identifier. */
  workflow_id: string;
  step_id: string;
  controls: string;
  updated_at: string;
}

/** Dashboard users (migration 0013). `email` is stored lower-case and is unique across organizations. */
export interface UsersTable {
  id: string;
  organization_id: string;
  email: string;
  name: string | null;
  role: string;
  /** `scrypt$N$r$p$salt$hash` (base64), see usecases/dashboard/passwords.ts. */
  password_hash: string;
  created_at: string;
  updated_at: string;
}

export interface DashboardSessionsTable {
  /** sha256 hex of the cookie value. */
  token_hash: string;
  user_id: string;
  created_at: string;
  expires_at: string;
}

/** One-time links: the first-start setup link (`kind` setup) and invites (`kind` invite). */
export interface DashboardTokensTable {
  id: string;
  token_hash: string;
  kind: string;
  organization_id: string | null;
  role: string | null;
  email: string | null;
  created_by: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
}

export interface LoginAttemptsTable {
  key: string;
  window_start: string;
  count: number;
}

export interface AuditLogTable {
  id: string;
  organization_id: string;
  environment_id: string | null;
  actor_kind: string;
  actor_id: string | null;
  actor_label: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: string;
  ip: string | null;
  created_at: string;
}

export type { Generated };

/** Outbound webhook endpoints (migration 0020). Headers and secrets are SecretBox ciphertexts. */
export interface WebhookEndpointsTable {
  id: string;
  environment_id: string;
  url: string;
  description: string;
  /** JSON array; empty = every type. */
  event_types: string;
  enabled: number;
  headers_enc: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: string | null;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** The outbox: one row per domain event; `body` is the JSON sent to endpoints. */
export interface WebhookEventsTable {
  id: string;
  environment_id: string;
  type: string;
  body: string;
  /** 0 until the relay has made its attempts. */
  dispatched: number;
  created_at: string;
}

export interface WebhookAttemptsTable {
  id: string;
  environment_id: string;
  endpoint_id: string;
  webhook_id: string;
  event_type: string;
  attempt: number;
  status: string;
  response_status_code: number | null;
  duration_ms: number;
  response_body_snippet: string;
  error: string | null;
  due_at: string;
  created_at: string;
  finished_at: string | null;
}
