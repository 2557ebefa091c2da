import type { InboxFilter } from '../domain/inbox.js';
import type { EventStatus } from '../domain/event-status.js';
import type {
  Environment,
  Integration,
  Message,
  NotificationEvent,
  Organization,
  Page,
  Subscriber,
  Job,
  ExecutionDetail,
  DeliveryChannel,
  MarkAs,
  Topic,
  TopicSubscription,
  JobStatus,
} from '../domain/types.js';
import type { Workflow } from '../domain/workflow.js';
import type { UserRole } from '../domain/types.js';
import type { ApiKeyInfo, AuditEntry, DashboardSessionRecord, OneTimeToken, OneTimeTokenKind, StoredUser } from '../domain/dashboard.js';
import type { GlobalPreference, WorkflowPreference } from '../domain/preferences.js';

/**
 * Repository contracts. Use-cases see only these interfaces; `store/sql/` implements them once for
 * SQLite and PostgreSQL. Every method that reads or writes tenant data takes the environment id and
 * never touches a record of another environment. `get*` returns `undefined` for an unknown id.
 * Each area owns its section below.
 */

// ---- tenancy: organizations, environments, API keys, settings -------------------------------------

export interface ApiKeyRecord {
  id: string;
  environmentId: string;
  organizationId: string;
}

export interface TenancyRepository {
  createOrganization(org: Organization): Promise<void>;
  /** Generates the public `identifier` when the input has none. */
  createEnvironment(env: Omit<Environment, 'identifier'> & { identifier?: string }): Promise<void>;
  listEnvironments(): Promise<Environment[]>;
  getEnvironment(id: string): Promise<Environment | undefined>;
  findEnvironmentByName(name: string): Promise<Environment | undefined>;
  /** The environment with this public application identifier (the Inbox session's `applicationIdentifier`). */
  findEnvironmentByIdentifier(identifier: string): Promise<Environment | undefined>;
  /**
   * Stores the hash for authentication and, when `secretKey` is given, the key encrypted with the master key
   * (never in plaintext) so Inbox HMACs (`subscriberHash`) can be verified with it.
   */
  createApiKey(input: { id: string; environmentId: string; keyHash: string; secretKey?: string; createdAt: string }): Promise<void>;
  findApiKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /** The decrypted unrevoked secret keys of an environment that have an encrypted copy (keys made since migration 0010), newest first. */
  listHmacKeys(environmentId: string): Promise<string[]>;
  /** How many unrevoked keys the environment has, with and without an encrypted copy. */
  countApiKeys(environmentId: string): Promise<{ total: number; hmacCapable: number }>;
  getSetting(key: string): Promise<string | undefined>;
  /** Inserts only when absent; returns the value now stored (the existing one if there was one). */
  putSettingIfAbsent(key: string, value: string): Promise<string>;
}

// ---- integrations ----------------------------------------------------------------------------------

export interface IntegrationRepository {
  create(integration: Integration): Promise<void>;
  get(environmentId: string, id: string): Promise<Integration | undefined>;
  /** Non-deleted integrations of the environment, oldest first. */
  list(environmentId: string, filter?: { channel?: DeliveryChannel; activeOnly?: boolean }): Promise<Integration[]>;
  findByIdentifier(environmentId: string, identifier: string): Promise<Integration | undefined>;
  /** Replaces the stored record (all fields) with `integration`; matched by environment and id. */
  save(integration: Integration): Promise<void>;
}

// ---- subscribers -----------------------------------------------------------------------------------

export interface SubscriberListFilter {
  email?: string;
  name?: string;
  subscriberId?: string;
  phone?: string;
  /** Newest first (DESC, the default) or oldest first, by createdAt then _id. */
  orderDirection?: 'ASC' | 'DESC';
  /** Keyset cursors (Novu v2): records after / before this one in the order. They replace `page`. */
  after?: { createdAt: string; id: string };
  before?: { createdAt: string; id: string };
  page: number;
  limit: number;
}

export interface SubscriberRepository {
  create(subscriber: Subscriber): Promise<void>;
  get(environmentId: string, id: string): Promise<Subscriber | undefined>;
  /** By the external subscriberId; non-deleted only. */
  findBySubscriberId(environmentId: string, subscriberId: string): Promise<Subscriber | undefined>;
  findManyBySubscriberIds(environmentId: string, subscriberIds: string[]): Promise<Subscriber[]>;
  /** Replaces the stored record; matched by environment and `_id`. */
  save(subscriber: Subscriber): Promise<void>;
  /** Filters AND-ed; totalCount counts the filter matches regardless of page or cursor. */
  list(environmentId: string, filter: SubscriberListFilter): Promise<Page<Subscriber>>;
  /** Every non-deleted subscriber id of the environment, in pages (for broadcast). */
  listIds(environmentId: string, afterId: string | undefined, limit: number): Promise<Array<{ _id: string; subscriberId: string }>>;
  /** By internal ids, deleted ones included (a message or event keeps showing who it was for). */
  getMany(environmentId: string, ids: string[]): Promise<Subscriber[]>;
  /**
   * Soft-deletes the subscriber (its subscriberId becomes free for a new one) and drops its topic
   * subscriptions so topic triggers stop reaching it, and its preferences. False when there was no such non-deleted subscriber.
   */
  delete(environmentId: string, id: string, at: string): Promise<boolean>;
}

// ---- messages --------------------------------------------------------------------------------------

export interface MessageListFilter {
  channel?: DeliveryChannel;
  /** External subscriberId. */
  subscriberId?: string;
  transactionIds?: string[];
  /** Exact, order-insensitive set match. */
  contextKeys?: string[];
  /** The inbox feed's filters (in-app read/seen flags). */
  read?: boolean;
  seen?: boolean;
  page: number;
  limit: number;
}

export interface MessageRepository {
  /**
   * Inserts a message. A message for a job that already has one is not inserted again: returns the
   * existing one (`created: false`), which makes step reruns idempotent.
   */
  create(message: Message): Promise<{ message: Message; created: boolean }>;
  /**
   * Inserts many messages with multi-row statements (bulk producers, seeding). Messages whose job already
   * has one are skipped, as in `create`. Call it inside a transaction for all-or-nothing.
   */
  createMany(messages: Message[]): Promise<void>;
  get(environmentId: string, id: string): Promise<Message | undefined>;
  findByJobId(environmentId: string, jobId: string): Promise<Message | undefined>;
  /** Newest first, non-deleted; always returns totalCount. */
  list(environmentId: string, filter: MessageListFilter): Promise<Page<Message>>;
  /** The subscriber's non-deleted in-app messages among `ids`. */
  findInAppForSubscriber(environmentId: string, subscriberInternalId: string, ids: string[]): Promise<Message[]>;
  /** Applies a mark-as to the given ids; returns the updated messages in the order of `ids`. */
  markAs(environmentId: string, ids: string[], markAs: MarkAs, at: string): Promise<Message[]>;
  /** Replaces the stored record (status, deliveredAt, errorText, ...). */
  save(message: Message): Promise<void>;
  softDelete(environmentId: string, id: string, at: string): Promise<boolean>;
  /**
   * The badge counts of one subscriber's Inbox (what the realtime count events carry): non-deleted in-app messages
   * that are not read, archived or snoozed at `at`, by severity (a message without one counts as `none`), and
   * those of them not seen.
   */
  countInboxBadges(environmentId: string, subscriberRecordId: string, at: string): Promise<InboxBadgeCounts>;
  /**
   * Applies a mark-as to every non-deleted in-app message of the subscriber (internal id; `externalSubscriberId`
   * narrows the search through its index) that it would change; returns how many changed. Call it in a transaction.
   */
  markAllInApp(environmentId: string, subscriber: { _id: string; subscriberId: string }, markAs: MarkAs, at: string): Promise<number>;
  /** Soft-deletes the non-deleted messages of a transaction (of one channel when given); returns what was deleted. */
  softDeleteByTransaction(
    environmentId: string,
    transactionId: string,
    channel: DeliveryChannel | undefined,
    at: string,
  ): Promise<Array<{ _id: string; _subscriberId: string; channel: DeliveryChannel }>>;
  /**
   * One page of a subscriber's in-app Inbox (non-deleted), newest first by (createdAt, _id), filtered. `after` is an
   * exclusive cursor position (see findInboxPosition); `offset` skips that many further matches.
   */
  listInbox(environmentId: string, subscriberRecordId: string, filter: InboxFilter, page: InboxPage): Promise<{ data: Message[]; hasMore: boolean }>;
  /** For each filter, how many of the subscriber's non-deleted in-app messages match it (in the filters' order). */
  countInbox(environmentId: string, subscriberRecordId: string, filters: InboxFilter[]): Promise<number[]>;
  /** The cursor position of one of the subscriber's in-app messages, deleted ones included (a page may hold one deleted since). */
  findInboxPosition(environmentId: string, subscriberRecordId: string, id: string): Promise<InboxCursor | undefined>;
  /**
   * Saves what an Inbox action changed (read/seen/archived/snooze flags and dates, cta): none of the counted columns.
   * False when the message was deleted meanwhile.
   */
  saveInboxState(message: Message): Promise<boolean>;
}

export interface InboxCursor {
  createdAt: string;
  id: string;
}

export interface InboxPage {
  after?: InboxCursor;
  offset: number;
  limit: number;
}

export interface InboxBadgeCounts {
  unread: { total: number; severity: { high: number; medium: number; low: number; none: number } };
  unseen: number;
}

// ---- notification events, jobs, execution details -----------------------------------------------

export interface NotificationListFilter {
  channels?: string[];
  templates?: string[];
  emails?: string[];
  search?: string;
  /** External subscriberIds. */
  subscriberIds?: string[];
  severity?: string[];
  transactionId?: string;
  topicKey?: string;
  subscriptionId?: string;
  contextKeys?: string[];
  /** ISO bounds on createdAt, exclusive. */
  after?: string;
  before?: string;
  /** Herald extension: the event's status from its jobs (domain/event-status.ts). */
  status?: EventStatus;
  page: number;
  limit: number;
}

export interface NotificationOwner {
  id: string;
  subscriberId: string;
  transactionId: string;
}

export interface NotificationRepository {
  /** Inserts many events (without jobs) with multi-row statements; call it inside a transaction. */
  createMany(events: NotificationEvent[]): Promise<void>;
  /** Inserts the event and its jobs with their execution details, all or nothing (in one statement on PostgreSQL). */
  createWithJobs(event: NotificationEvent, jobs: StoredJob[]): Promise<void>;
  /** The event with its jobs and each job's execution details. */
  get(environmentId: string, id: string): Promise<NotificationEvent | undefined>;
  /** Which of these ids are taken, and by which subscriber and transaction (no documents read). */
  findOwners(environmentId: string, ids: string[]): Promise<NotificationOwner[]>;
  /** Newest first; `hasMore` from a limit+1 fetch; events with their jobs and details. */
  list(environmentId: string, filter: NotificationListFilter): Promise<Page<NotificationEvent>>;
  /** Updates the mutable parts of an event (channels, updatedAt, digested id). */
  save(event: NotificationEvent): Promise<void>;
}

/** A job as stored: the spec's Job plus the ids that place it. */
export interface StoredJob extends Job {
  _environmentId: string;
  _organizationId: string;
  _notificationId: string;
  _subscriberId: string;
  transactionId: string;
  _templateId?: string;
  stepIndex: number;
  digestGroup?: string | null;
  createdAt: string;
}

export interface JobRepository {
  createMany(jobs: StoredJob[]): Promise<void>;
  get(environmentId: string, id: string): Promise<StoredJob | undefined>;
  listForNotification(environmentId: string, notificationId: string): Promise<StoredJob[]>;
  /**
   * Replaces the stored job (status, digest, document) but not its execution details; with `detail`, also adds that
   * one execution detail, both or neither.
   */
  save(job: StoredJob, detail?: ExecutionDetail): Promise<void>;
}

// ---- workflows -----------------------------------------------------------------------------------------

export interface WorkflowListFilter {
  /** Case-insensitive match on name or workflowId. */
  query?: string;
  offset: number;
  limit: number;
}

export interface WorkflowRepository {
  create(workflow: Workflow): Promise<void>;
  /** By internal `_id` or by `workflowId` (the trigger identifier); non-deleted only. */
  get(environmentId: string, idOrWorkflowId: string): Promise<Workflow | undefined>;
  list(environmentId: string, filter: WorkflowListFilter): Promise<{ workflows: Workflow[]; totalCount: number }>;
  save(workflow: Workflow): Promise<void>;
}

// ---- subscriber preferences ----------------------------------------------------------------------------

/** A subscriber's stored preference records: the global one (if ever written) and one per workflow it changed. */
export interface SubscriberPreferences {
  global?: GlobalPreference;
  /** By the workflow's internal `_id`; records of deleted workflows are kept (callers list live workflows). */
  workflows: Record<string, WorkflowPreference>;
}

export interface SubscriberPreferenceRepository {
  /** Every record of the subscriber (internal id). */
  listForSubscriber(environmentId: string, subscriberInternalId: string): Promise<SubscriberPreferences>;
  /** The global record and the workflow's, in one indexed read (the worker, before each channel step). */
  getForDelivery(
    environmentId: string,
    subscriberInternalId: string,
    workflowInternalId: string,
  ): Promise<{ global?: GlobalPreference; workflow?: WorkflowPreference }>;
  /** Creates or replaces the global record (enabled, channels, schedule); `updatedAt` is `at`. */
  saveGlobal(environmentId: string, subscriberInternalId: string, record: GlobalPreference, at: string): Promise<void>;
  /** Creates or replaces the record for one workflow (internal id). */
  saveWorkflow(environmentId: string, subscriberInternalId: string, workflowInternalId: string, record: WorkflowPreference, at: string): Promise<void>;
  deleteForSubscriber(environmentId: string, subscriberInternalId: string): Promise<void>;
}

// ---- topics -----------------------------------------------------------------------------------------------

export interface TopicRepository {
  create(topic: Topic): Promise<void>;
  getByKey(environmentId: string, key: string): Promise<Topic | undefined>;
  list(environmentId: string, filter: { key?: string; name?: string; offset: number; limit: number }): Promise<{ topics: Topic[]; totalCount: number }>;
  save(topic: Topic): Promise<void>;
  delete(environmentId: string, topicId: string): Promise<void>;
  /** Adds subscriptions; existing ones are kept and returned as they were. */
  addSubscriptions(subscriptions: TopicSubscription[]): Promise<TopicSubscription[]>;
  removeSubscriptions(environmentId: string, topicId: string, subscriberInternalIds: string[]): Promise<number>;
  listSubscriptions(environmentId: string, topicId: string, filter: { afterId?: string; limit: number }): Promise<TopicSubscription[]>;
  /** The topic's subscriptions of the given subscribers (internal ids), in id order. */
  findSubscriptions(environmentId: string, topicId: string, subscriberInternalIds: string[]): Promise<TopicSubscription[]>;
  countSubscriptions(environmentId: string, topicId: string): Promise<number>;
}

// ---- triggers (the durable record of an accepted trigger; see schema.ts TriggersTable) ------------------

export interface TriggerRecord {
  _id: string;
  environmentId: string;
  organizationId: string;
  transactionId: string;
  workflowId: string;
  /** The accepted request: to, payload, overrides, actor, context, tenant, ... */
  request: Record<string, unknown>;
  state: 'accepted' | 'processed' | 'failed' | 'canceled';
  error?: string;
  createdAt: string;
  updatedAt: string;
}

export interface TriggerRepository {
  /** Inserts unless the transactionId is already used in the environment; then returns the existing one. */
  create(trigger: TriggerRecord): Promise<{ trigger: TriggerRecord; created: boolean }>;
  get(environmentId: string, id: string): Promise<TriggerRecord | undefined>;
  findByTransactionId(environmentId: string, transactionId: string): Promise<TriggerRecord | undefined>;
  setState(environmentId: string, id: string, state: TriggerRecord['state'], error?: string): Promise<void>;
  /** Accepted triggers older than `before` (the recovery sweep re-enqueues them). */
  listStale(before: string, limit: number): Promise<TriggerRecord[]>;
  /**
   * The engine's reads across the jobs table (owned with the triggers): jobs sharing a `digestGroup`
   * (digest and throttle steps) in the given statuses, oldest first.
   */
  listJobsInGroup(environmentId: string, digestGroup: string, statuses: JobStatus[]): Promise<JobRef[]>;
  /** Jobs of a transaction in the given statuses (cancel). */
  listJobsOfTransaction(environmentId: string, transactionId: string, statuses: JobStatus[]): Promise<JobRef[]>;
}

/** A job's identity and timing, without its document. */
export interface JobRef {
  _id: string;
  _notificationId: string;
  status: JobStatus;
  createdAt: string;
  updatedAt: string;
}

// ---- idempotency keys --------------------------------------------------------------------------------

export interface IdempotencyRecord {
  environmentId: string;
  key: string;
  method: string;
  path: string;
  bodyHash: string;
  state: 'in_progress' | 'done';
  responseStatus?: number;
  responseBody?: string;
  responseHeaders?: Record<string, string>;
  expiresAt: string;
  /** Until when an in-progress claim holds without renewal; absent (older records) = lapsed. */
  leaseExpiresAt?: string;
  /**
   * Chosen by the first claim and kept by every takeover, so a request run again after its process died can reuse
   * the ids it chose the first time (a trigger's transactionId): the re-run then finds what the first run stored.
   */
  seed?: string;
}

export interface IdempotencyStore {
  /**
   * Claims the key atomically for this store's owner (its process instance). Returns `{ claimed: true }` for the
   * first request, else the record that holds the key (in progress or done). Expired records are treated as absent.
   * An in-progress record whose lease has passed (its holder died) is taken over by a claim for the same method,
   * path and body: `{ claimed: true, resumed }` with the record as it was (its `seed` is kept). Exactly one of
   * several concurrent claimants wins, fresh or taken over.
   */
  claim(
    record: IdempotencyRecord,
    now: string,
  ): Promise<{ claimed: true; resumed?: IdempotencyRecord } | { claimed: false; existing: IdempotencyRecord }>;
  /** Extends the lease of this owner's in-progress claims among `claims` (a heartbeat while they run). */
  renew(claims: Array<{ environmentId: string; key: string }>, leaseExpiresAt: string): Promise<void>;
  /** Stores the answer, if this owner still holds the claim. */
  complete(environmentId: string, key: string, response: { status: number; body: string; headers: Record<string, string> }): Promise<void>;
  /** Drops this owner's in-progress claim (the request failed before producing a storable answer). */
  release(environmentId: string, key: string): Promise<void>;
}

// ---- rate limits ---------------------------------------------------------------------------------------

export interface RateLimitStore {
  /** Adds one hit to the counter of (environment, category, window) and returns the count after it. */
  hit(environmentId: string, category: string, windowStart: string, windowSeconds: number): Promise<number>;
}

// ---- dashboard: users, sessions, one-time links, secret-key management, audit log ----------------------

export interface DashboardRepository {
  getOrganization(id: string): Promise<Organization | undefined>;
  /** The organization made on the first start (the oldest), which the setup link and the CLI add users to. */
  firstOrganization(): Promise<Organization | undefined>;
  countUsers(): Promise<number>;
  /** False when the email is already taken (emails are unique across organizations). */
  createUser(user: StoredUser): Promise<boolean>;
  getUser(organizationId: string, id: string): Promise<StoredUser | undefined>;
  /** By normalized email, in any organization. */
  findUserByEmail(email: string): Promise<StoredUser | undefined>;
  /** Oldest first. */
  listUsers(organizationId: string): Promise<StoredUser[]>;
  countAdmins(organizationId: string): Promise<number>;
  updateUser(
    organizationId: string,
    id: string,
    patch: { role?: UserRole; name?: string | null; passwordHash?: string; updatedAt: string },
  ): Promise<boolean>;
  /** Deletes the user and every session of theirs. */
  deleteUser(organizationId: string, id: string): Promise<boolean>;

  createSession(session: DashboardSessionRecord): Promise<void>;
  /** The session and its user when the session exists and has not expired at `now` (ISO). */
  findSession(tokenHash: string, now: string): Promise<{ session: DashboardSessionRecord; user: StoredUser } | undefined>;
  deleteSession(tokenHash: string): Promise<void>;
  deleteSessionsOfUser(userId: string): Promise<void>;

  createToken(token: OneTimeToken): Promise<void>;
  /**
   * Marks the token used if it is of `kind`, unused, not revoked and not expired at `now`, in one statement, so
   * two concurrent uses cannot both succeed. Returns the token as it was, or undefined.
   */
  consumeToken(tokenHash: string, kind: OneTimeTokenKind, now: string): Promise<OneTimeToken | undefined>;
  /** Invites of the organization not yet used nor revoked (expired ones included), newest first. */
  listOpenInvites(organizationId: string): Promise<OneTimeToken[]>;
  revokeInvite(organizationId: string, id: string, now: string): Promise<boolean>;

  /** Adds one attempt to the counter of (key, window) and returns the count after it. */
  countLoginAttempt(key: string, windowStart: string): Promise<number>;
  clearLoginAttempts(key: string): Promise<void>;

  /** Records what the key listing shows (tenancy.createApiKey stores the hash). */
  describeApiKey(id: string, details: { last4: string; createdBy?: string }): Promise<void>;
  /** Keys of the environment, revoked ones included, newest first. */
  listApiKeys(environmentId: string): Promise<ApiKeyInfo[]>;
  /** Marks the key revoked; returns its hash (for cache invalidation) or undefined when unknown or already revoked. */
  revokeApiKey(environmentId: string, id: string, now: string): Promise<{ keyHash: string } | undefined>;

  appendAudit(entry: AuditEntry): Promise<void>;
  /** Newest first. */
  listAudit(organizationId: string, page: number, limit: number): Promise<Page<AuditEntry>>;
}

// ---- secret-key revocations between processes -----------------------------------------------------------

/**
 * Tells every process that a secret key was revoked, so per-process caches of keys drop it at once. Embedded: an
 * in-process call. Scaled out: Redis pub/sub; a process whose subscription is down must not trust its cache.
 */
export interface KeyRevocations {
  /** Announces a revoked key (by its hash) to every process, this one first; resolves once published. */
  publish(keyHash: string): Promise<void>;
  /** `keyHash` undefined means: forget every cached key (after missed announcements could have happened). */
  onRevoked(listener: (keyHash: string | undefined) => void): void;
  /** False while this process might miss an announcement (its subscription is down). */
  readonly listening: boolean;
  close(): Promise<void>;
}

// ---- the store as a whole ----------------------------------------------------------------------------

export interface Store {
  tenancy: TenancyRepository;
  integrations: IntegrationRepository;
  subscribers: SubscriberRepository;
  messages: MessageRepository;
  notifications: NotificationRepository;
  jobs: JobRepository;
  workflows: WorkflowRepository;
  topics: TopicRepository;
  triggers: TriggerRepository;
  dashboard: DashboardRepository;
  preferences: SubscriberPreferenceRepository;
  /** Runs `work` in one database transaction, with a Store bound to it. */
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T>;
  /**
   * Inside `transaction()`: holds a lock named `key` until the transaction ends, so that read-then-write decisions
   * about one key (a digest group, a throttle window) never interleave across workers. PostgreSQL takes a
   * transaction-scoped advisory lock; on SQLite transactions already run one at a time.
   */
  lockKey(key: string): Promise<void>;
  /** Throws when the database cannot be reached (health check, 503 mapping). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
