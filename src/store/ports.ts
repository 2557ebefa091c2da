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
  KeptEventText,
} from '../domain/types.js';
import type { Workflow } from '../domain/workflow.js';
import type { ListedMessage } from '../domain/stored-message.js';
import type { UserRole } from '../domain/types.js';
import type { ApiKeyInfo, AuditEntry, DashboardSessionRecord, OneTimeToken, OneTimeTokenKind, StoredUser } from '../domain/dashboard.js';
import type { GlobalPreference, WorkflowPreference } from '../domain/preferences.js';
import type { DomainEvent, WebhookAttempt, WebhookAttemptStatus, WebhookEndpoint, WebhookEventBody, WebhookSecrets } from '../domain/webhooks.js';

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
  /** Gives keys that have an encrypted copy but no last-four hint (first-start keys made before hints were kept) their hint; returns how many. */
  backfillApiKeyHints(): Promise<number>;
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
  /** Returns the record as `get` would now read it, when the store can tell without reading it (else undefined). */
  create(subscriber: Subscriber): Promise<Subscriber | undefined>;
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
   * The non-deleted message whose vendor message id (`identifier`, set at send time) is one of `identifiers`, tried
   * in the order given; undefined when none is.
   */
  findByIdentifier(environmentId: string, identifiers: string[]): Promise<Message | undefined>;
  /**
   * Inserts many messages with multi-row statements (bulk producers, seeding). Messages whose job already
   * has one are skipped, as in `create`. Call it inside a transaction for all-or-nothing.
   */
  createMany(messages: Message[]): Promise<void>;
  get(environmentId: string, id: string): Promise<Message | undefined>;
  findByJobId(environmentId: string, jobId: string): Promise<Message | undefined>;
  /** Newest first, non-deleted; always returns totalCount. */
  list(environmentId: string, filter: MessageListFilter): Promise<Page<Message>>;
  /**
   * The same page as `list` in its stored form (see ListedMessage): each message's list text when it has one, else
   * its columns with the document left as the stored JSON text. A store may set each message's `subscriber` record
   * when it reads them with the page (PostgreSQL does, in the page's statement); the caller looks up the others.
   */
  listStored(environmentId: string, filter: MessageListFilter): Promise<Page<ListedMessage>>;
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
  /** `markAllInApp` answering the changed messages (for their domain events). */
  markAllInAppMessages(environmentId: string, subscriber: { _id: string; subscriberId: string }, markAs: MarkAs, at: string): Promise<Message[]>;
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
  /**
   * Only on a store that holds its writes where the held write can refuse taken ids itself (PostgreSQL's one
   * statement): as createWithJobs, but the whole held write fails, nothing written, when the event's id or any of
   * `otherIds` is already taken (by any event of any environment). Lets a caller skip looking the id up (findOwners)
   * when it is almost always free, and look it up only after such a failure.
   */
  createWithJobsIfIdsFree?(event: NotificationEvent, jobs: StoredJob[], otherIds: string[]): Promise<void>;
  /** The event with its jobs and each job's execution details. */
  get(environmentId: string, id: string): Promise<NotificationEvent | undefined>;
  /** Which of these ids are taken, and by which subscriber and transaction (no documents read). */
  findOwners(environmentId: string, ids: string[]): Promise<NotificationOwner[]>;
  /** Newest first; `hasMore` from a limit+1 fetch; events with their jobs and details. */
  list(environmentId: string, filter: NotificationListFilter): Promise<Page<NotificationEvent>>;
  /** Updates the mutable parts of an event (channels, updatedAt, digested id). */
  save(event: NotificationEvent): Promise<void>;
  /**
   * Reads the event (with its jobs and their details) and keeps `render`'s text for it, if `render` gives one; after
   * any later write to the event, its jobs or their details the text is not used. SQLite: as one step no other write
   * comes between, and the write drops the text. PostgreSQL: gathered with the other events ending within a window
   * (keepsTextsOverWindow; the promise settles when they are kept), each text kept with the print of the rows it was
   * written from and used only while they are unchanged.
   */
  keepText(environmentId: string, id: string, render: (event: NotificationEvent) => string | undefined): Promise<void>;
  /** As `list`, but an event with a kept text comes as that text, and its document, jobs and details are not read. */
  listWithTexts(environmentId: string, filter: NotificationListFilter): Promise<Page<NotificationEvent | KeptEventText>>;
  /** True where keepText waits for a window to gather events (PostgreSQL): a job should not wait for it. */
  readonly keepsTextsOverWindow?: boolean;
  /**
   * Only on a store that holds its writes (Store.holdsWrites): true when keepText of this event is written with the
   * held writes (the event is held here: SQLite's block, PostgreSQL's statement); otherwise it must wait until they
   * are written.
   */
  keepsTextWithHeldWrites?(environmentId: string, id: string): boolean;
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
  /** Adds one execution detail to a job without touching the job itself (a provider's report after the step ended). */
  addDetail(job: Pick<StoredJob, '_id' | '_environmentId' | '_notificationId'>, detail: ExecutionDetail): Promise<void>;
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
  /**
   * By internal `_id` or by `workflowId` (the trigger identifier); non-deleted only. The answer is the caller's own
   * to change, unless `shared`: then the caller only reads it, and it may be an object the process keeps for every
   * reader, frozen (a change throws).
   */
  get(environmentId: string, idOrWorkflowId: string, options?: { shared?: boolean }): Promise<Workflow | undefined>;
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
  /**
   * One subscriber's (internal id) subscriptions across topics with their topics, in id (creation) order or its
   * reverse, after the cursor `afterId` (the last subscription `_id` of the previous page); `topicKey`: that topic only.
   */
  listSubscriberSubscriptions(
    environmentId: string,
    subscriberInternalId: string,
    filter: { afterId?: string; limit: number; topicKey?: string; descending?: boolean },
  ): Promise<Array<{ subscription: TopicSubscription; topic: Topic }>>;
  countSubscriberSubscriptions(environmentId: string, subscriberInternalId: string, filter: { topicKey?: string }): Promise<number>;
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
  /**
   * Present on a store that counts in this process's memory: the same hit as `hit`, its count answered without a
   * promise (the embedded server counts every request; a promise per request is a cost of its own).
   */
  hitNow?(environmentId: string, category: string, windowStart: string, windowSeconds: number): number;
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

// ---- domain events (the outbox) and outbound webhooks -------------------------------------------------

/**
 * The outbox of domain events (ARCHITECTURE.md point 13). A use-case that changes state records the events of the
 * change here, inside the same `store.transaction()` as the change, so the change and its events commit or roll back
 * together; after the commit the worker fans them out to webhook endpoints (usecases/webhooks/fan-out-events.ts).
 *
 * Cheap when nobody listens: an environment without an enabled endpoint stores nothing (`wanted` is false, `record`
 * returns at once). That answer is cached per process for `HERALD_WEBHOOK_PRESENCE_CACHE_MS` and dropped at once
 * when any process changes an endpoint (announceEndpointsChanged).
 */
export interface EventOutbox {
  /** Whether `record` would store anything for this environment now (it has an enabled endpoint). */
  wanted(environmentId: string): Promise<boolean>;
  /**
   * Stores `events` for later delivery, stamped with a new id and `timestamp` (ISO, now); nothing when the
   * environment has no enabled endpoint. Call it with the transaction-bound store of the change
   * (`store.transaction(async (tx) => { ...change...; await tx.events.record(env, [event]) })`): outside a
   * transaction the event is stored on its own and a crash between the two writes loses one or the other.
   * Returns the stored bodies (empty when nothing was stored).
   */
  record(environmentId: string, events: DomainEvent[]): Promise<WebhookEventBody[]>;
  /** Drops this process's cached `wanted` answer (one environment, or all). */
  forget(environmentId?: string): void;
}

export interface WebhookAttemptListFilter {
  status?: WebhookAttemptStatus;
  page: number;
  limit: number;
}

export interface WebhookRepository {
  /** Stores the endpoint with its secret (encrypted). */
  createEndpoint(endpoint: WebhookEndpoint, secret: string): Promise<void>;
  /** Non-deleted only. */
  getEndpoint(environmentId: string, id: string): Promise<WebhookEndpoint | undefined>;
  /** Non-deleted endpoints, oldest first. */
  listEndpoints(environmentId: string, filter?: { enabledOnly?: boolean }): Promise<WebhookEndpoint[]>;
  /** Whether the environment has a non-deleted, enabled endpoint (one indexed read). */
  hasEnabledEndpoint(environmentId: string): Promise<boolean>;
  /** Replaces the endpoint's fields (not its secret); false when it is gone. */
  saveEndpoint(endpoint: WebhookEndpoint): Promise<boolean>;
  /** Soft delete; its pending attempts are never sent. False when there was no such endpoint. */
  deleteEndpoint(environmentId: string, id: string, at: string): Promise<boolean>;
  /**
   * Notes a failed attempt: sets `failingSince` to `at` unless already set. Returns the value now stored and whether
   * this call set it (the endpoint was healthy until now).
   */
  noteEndpointFailure(environmentId: string, id: string, at: string): Promise<{ failingSince: string | undefined; started: boolean }>;
  /** A successful attempt: the endpoint is healthy again (`failingSince` cleared). True when it was failing. */
  clearEndpointFailure(environmentId: string, id: string): Promise<boolean>;
  /** Disables the endpoint with the reason admins see. */
  disableEndpoint(environmentId: string, id: string, reason: string, at: string): Promise<void>;
  getSecrets(environmentId: string, id: string): Promise<WebhookSecrets | undefined>;
  /**
   * The endpoint and its secrets for sending, from a per-process cache kept like EventOutbox.wanted's (dropped in every
   * process by announceEndpointsChanged, which every change of an endpoint's fields, secret or health makes).
   */
  getDeliveryTarget(environmentId: string, id: string): Promise<{ endpoint: WebhookEndpoint; secrets: WebhookSecrets } | undefined>;
  /** Makes `secret` current; the old one keeps signing until `previousExpiresAt`. */
  rotateSecret(environmentId: string, id: string, secret: string, previousExpiresAt: string, at: string): Promise<void>;

  /** Stores events that need no fan-out (a test event for one endpoint). */
  createDispatchedEvent(event: WebhookEventBody): Promise<void>;
  getEvent(environmentId: string, id: string): Promise<WebhookEventBody | undefined>;
  /**
   * Up to `limit` events not fanned out yet, oldest first, locked until the transaction ends (PostgreSQL: rows other
   * workers skip). Call inside a transaction, then `markEventsDispatched` in it.
   */
  claimUndispatchedEvents(limit: number): Promise<WebhookEventBody[]>;
  markEventsDispatched(ids: string[]): Promise<void>;

  createAttempts(attempts: WebhookAttempt[]): Promise<void>;
  getAttempt(environmentId: string, id: string): Promise<WebhookAttempt | undefined>;
  /**
   * Writes the outcomes of attempts that are still pending, in one statement per 500, and answers the ids written: an
   * attempt another run finished meanwhile (a sweep's re-send racing the first) is left alone, so only one run goes on
   * to schedule its retry.
   */
  finishAttempts(attempts: WebhookAttempt[]): Promise<string[]>;
  /** The endpoint's attempts, newest first. */
  listAttempts(environmentId: string, endpointId: string, filter: WebhookAttemptListFilter): Promise<{ data: WebhookAttempt[]; hasMore: boolean }>;
  /** Events (ids and types) of the endpoint created since `since` whose latest attempt failed. */
  listFailedEvents(environmentId: string, endpointId: string, since: string): Promise<Array<{ webhookId: string; eventType: string }>>;
  /**
   * Deletes up to `limit` dispatched events and finished attempts recorded before `before` (ISO), of any environment;
   * returns how many rows went (the sweep calls it until it returns less than a batch).
   */
  pruneBefore(before: string, limit: number): Promise<number>;
  /** Pending attempts due before `dueBefore`, of any environment (the sweep that re-enqueues lost jobs). */
  listOverdueAttempts(dueBefore: string, limit: number): Promise<WebhookAttempt[]>;
}

// ---- the store as a whole ----------------------------------------------------------------------------

/** Vendor event ids of provider delivery reports already recorded, so a vendor's redelivery changes nothing. */
export interface ProviderReportRepository {
  /** Records the event id; false when it was already recorded. Call it in the transaction of the report's change. */
  claim(environmentId: string, integrationId: string, eventId: string, at: string): Promise<boolean>;
}

// ---- framework bridge (code-first workflows) -----------------------------------------------------------

export interface BridgeEndpoint {
  environmentId: string;
  url: string;
  /** The API key the sync was made with. */
  apiKeyId?: string;
  syncedAt: string;
}

export interface BridgeRepository {
  getEndpoint(environmentId: string): Promise<BridgeEndpoint | undefined>;
  /** Creates or replaces the environment's bridge. */
  saveEndpoint(endpoint: BridgeEndpoint): Promise<void>;
  /**
   * The secret key that signs calls to the environment's bridge: the key named by `apiKeyId` while it is unrevoked,
   * else the environment's newest unrevoked key; undefined when no key has an encrypted copy.
   */
  signingKey(environmentId: string, apiKeyId?: string): Promise<string | undefined>;
  /** Non-deleted workflows with origin `external`, oldest first. */
  listExternalWorkflows(environmentId: string): Promise<Workflow[]>;
  /** Stored control values of a step (by trigger identifier and stepId); undefined when never set. */
  getControls(environmentId: string, workflowId: string, stepId: string): Promise<Record<string, unknown> | undefined>;
  saveControls(environmentId: string, workflowId: string, stepId: string, controls: Record<string, unknown>, at: string): Promise<void>;
  /** Forgets every step's control values of a workflow (it was deleted by a sync). */
  deleteControls(environmentId: string, workflowId: string): Promise<void>;
}

// ---- retention -----------------------------------------------------------------------------------------

/** Where an event sweep stopped in one environment: events are walked in (createdAt, id) order. */
export interface RetentionCursor {
  createdAt: string;
  id: string;
}

/** Every batch reports how long it held the database (its transaction), which paces the sweep. */
export interface RetentionBatch {
  heldMs: number;
}

export interface ExpiredEventsDeleted extends RetentionBatch {
  /** Events looked at in this batch (those with an unfinished job are kept and skipped). */
  scanned: number;
  events: number;
  jobs: number;
  executionDetails: number;
  /** Where the next batch starts; undefined when this was the last batch. */
  next?: RetentionCursor;
}

export interface RetentionSweepSummary {
  owner: string;
  startedAt: string;
  finishedAt: string;
  events: number;
  jobs: number;
  executionDetails: number;
  triggers: number;
  messages: number;
  /** Embedded: database pages given back to the file system. */
  reclaimedPages: number;
  /** True when the sweep stopped early (shutdown, lost lease). */
  interrupted: boolean;
}

/**
 * Deleting history past its retention, in small batches, each its own short transaction. Every delete is safe to
 * run twice at once (two workers): a row is counted, and its counters moved, only by the delete that removed it.
 */
export interface RetentionRepository {
  /**
   * Up to `limit` events of the environment created before `before` (after the cursor), deleted with their jobs,
   * execution details and topic links; an event that still has an unfinished job (pending, queued, running,
   * delayed) is kept whole.
   */
  deleteExpiredEvents(environmentId: string, before: string, limit: number, after?: RetentionCursor): Promise<ExpiredEventsDeleted>;
  /** Up to `limit` finished trigger records (and failed queue jobs) created before `before`. */
  deleteExpiredTriggers(before: string, limit: number): Promise<RetentionBatch & { deleted: number }>;
  /** Up to `limit` messages of the environment created before `before`, deleted or not, with the message counters kept exact. */
  deleteExpiredMessages(
    environmentId: string,
    before: string,
    limit: number,
  ): Promise<RetentionBatch & { deleted: number; /** Subscriber records whose in-app messages were deleted. */ inboxes: string[] }>;
  /** Gives up to `maxPages` free pages back to the file system (SQLite incremental vacuum); 0 when none or not applicable. */
  reclaimSpace(maxPages: number): Promise<RetentionBatch & { pages: number }>;
  /** Takes or renews the named lease for `owner` until `until` when it is free, expired or already `owner`'s. */
  tryLease(name: string, owner: string, until: string, now: string): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;
  saveLastSweep(summary: RetentionSweepSummary): Promise<void>;
  lastSweep(): Promise<RetentionSweepSummary | undefined>;
}

/** The overview's kept counts (migration 0024), summed over a range of UTC hours. */
export interface OverviewRows {
  /** Per time bucket (`2026-11-25T14` or `2026-11-25`), channel and outcome. */
  series: Array<{ bucket: string; channel: string; outcome: string; count: number }>;
  /** The whole range, per channel × provider × workflow × outcome. */
  totals: Array<{ channel: string; providerId: string; workflowId: string; outcome: string; count: number }>;
  /** Trigger-to-delivery histogram of the range, per channel and bucket index (domain/overview.ts). */
  latency: Array<{ channel: string; bucket: number; count: number }>;
}

export interface OverviewRepository {
  /** `fromHour` inclusive, `toHour` exclusive, as `YYYY-MM-DDTHH` (UTC); `bucket` groups the series by hour or day. */
  read(environmentId: string, range: { fromHour: string; toHour: string; bucket: 'hour' | 'day' }): Promise<OverviewRows>;
  /**
   * A provider reported a message delivered or bounced: +1 to that outcome in the hour of the report. Call it once per
   * message and outcome (domain/overview.ts, overviewOutcomeOfReport), in the transaction of the report's change.
   */
  recordReportedOutcome(
    environmentId: string,
    report: { messageId: string; channel: string; providerId: string; workflowId: string; outcome: 'delivered' | 'bounced'; at: string },
  ): Promise<void>;
}

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
  providerReports: ProviderReportRepository;
  /** Domain events of changes, written with them (see EventOutbox). */
  events: EventOutbox;
  webhooks: WebhookRepository;
  bridge: BridgeRepository;
  retention: RetentionRepository;
  overview: OverviewRepository;
  /** Runs `work` in one database transaction, with a Store bound to it. */
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T>;
  /**
   * Runs `work` with a Store that holds the writes of a new notification event and of its first step, and writes them
   * together once `work` has returned: `notifications.createWithJobs`, then `jobs.save` of those jobs (the job is
   * inserted in the status it reached), `messages.create` of one of their messages, `subscribers.create` (a
   * subscriberId created meanwhile elsewhere fails the write; `save` is not held), `events.record` and
   * `triggers.setState`. PostgreSQL writes them in one statement: one round trip, one commit, all or nothing; SQLite
   * as one synchronous block (a savepoint, one group commit), which no other statement can interleave with and which
   * holds none up; nothing is written when `work` throws. Reads inside `work` do not see held writes; a write the store
   * cannot hold (another job's save or message, a lock) throws. Where writes cannot be held (inside a transaction)
   * `work` gets this store and its writes run at once. Anything that announces a held write (realtime, queue adds)
   * must wait until `batch` has returned.
   */
  batch<T>(work: (store: Store) => Promise<T>): Promise<T>;
  /**
   * True for the Store `batch` gives `work` when it holds the writes: until `batch` returns, nothing is
   * written, so what counts a write must wait too (held-effects.ts). False where `work`'s writes run at once.
   */
  readonly holdsWrites: boolean;
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
