import type { Kysely, Transaction } from 'kysely';
import { normalizeContextKeys } from '../../src/domain/context-keys.js';
import { newId } from '../../src/domain/ids.js';
import type { DeliveryChannel } from '../../src/domain/types.js';
import type { Store } from '../../src/store/ports.js';
import { channelsToMask } from '../../src/store/sql/channel-mask.js';
import { MessageCounterDeltas } from '../../src/store/sql/message-repository.js';
import type {
  Database,
  ExecutionDetailsTable,
  JobsTable,
  MessagesTable,
  NotificationTopicsTable,
  NotificationsTable,
} from '../../src/store/sql/schema.js';

/**
 * Fast bulk seeding for the list benchmarks: notification events, each with one job, two execution
 * details and one message, spread over subscribers, channels, context keys and topics. Rows are written
 * straight through Kysely as multi-row INSERTs, one transaction per `rowsPerTransaction` events, in the
 * exact column format the Sql*Repository classes write (ISO timestamps, 0/1 flags, JSON documents), and with
 * the message_counters increments SqlMessageRepository would have made, in the same transaction.
 *
 * Row i is a pure function of (plan, i): its creation time is `originMs + i * stepMs`, so seeding rows
 * [from, to) after [0, from) grows the data set without changing what was there, and the benchmark
 * can name filter values (a transactionId, a time window) that exist at every size.
 */
export interface ListSeedPlan {
  environmentId: string;
  organizationId: string;
  subscriberCount: number;
  topicCount: number;
  /** Distinct `tenant:*` context keys; half of the events carry one, half none. */
  tenantCount: number;
  /** Creation time of row 0, in ms; row i is created at originMs + i * stepMs. */
  originMs: number;
  stepMs: number;
  templateId: string;
  templateIdentifier: string;
  /** Internal subscriber ids, index = subscriber number (filled by seedSubscribers). */
  subscriberIds: string[];
  /** Topic ids, index = topic number (filled by seedSubscribers). */
  topicIds: string[];
}

export interface ListSeedOptions {
  subscriberCount?: number;
  topicCount?: number;
  tenantCount?: number;
  stepMs?: number;
  /** The largest row count that will be seeded: the origin is set so its last row is in the past. */
  maxRows: number;
  /** Defaults to Date.now(). */
  nowMs?: number;
}

export function createSeedPlan(environmentId: string, organizationId: string, options: ListSeedOptions): ListSeedPlan {
  const stepMs = options.stepMs ?? 1000;
  const nowMs = options.nowMs ?? Date.now();
  return {
    environmentId,
    organizationId,
    subscriberCount: options.subscriberCount ?? 1000,
    topicCount: options.topicCount ?? 10,
    tenantCount: options.tenantCount ?? 20,
    // One step of slack per row plus a minute, so every row is older than "now" (the default `before`).
    originMs: nowMs - (options.maxRows + 60) * stepMs,
    stepMs,
    templateId: newId(nowMs),
    templateIdentifier: 'order-shipped',
    subscriberIds: [],
    topicIds: [],
  };
}

export function externalSubscriberId(index: number): string {
  return `bench-subscriber-${index}`;
}

export function topicKey(index: number): string {
  return `bench-topic-${index}`;
}

export function tenantKey(index: number): string {
  return `tenant:acme-${index}`;
}

export function transactionIdOf(row: number): string {
  return `bench-txn-${row}`;
}

export function createdAtOf(plan: ListSeedPlan, row: number): string {
  return new Date(plan.originMs + row * plan.stepMs).toISOString();
}

/** What row i is: every attribute a list filter can select on. */
export interface SeedRowShape {
  subscriber: number;
  channel: DeliveryChannel;
  /** Tenant number, or undefined for no context keys. */
  tenant?: number;
  /** Topic number, or undefined when the event was not sent to a topic. */
  topic?: number;
  read: boolean;
}

/** A cheap integer hash, so the attributes of a row are uncorrelated with each other and with time. */
function mix(value: number, salt: number): number {
  let h = Math.imul(value ^ salt, 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca77);
  h ^= h >>> 13;
  return h >>> 0;
}

/** in_app 40 %, email 30 %, sms 10 %, push 10 %, chat 10 %. */
const CHANNEL_BUCKETS: DeliveryChannel[] = ['in_app', 'in_app', 'in_app', 'in_app', 'email', 'email', 'email', 'sms', 'push', 'chat'];

export function rowShape(plan: ListSeedPlan, row: number): SeedRowShape {
  const tenantDraw = mix(row, 3) % (plan.tenantCount * 2);
  const topicDraw = mix(row, 4) % (plan.topicCount * 5);
  return {
    subscriber: mix(row, 1) % plan.subscriberCount,
    channel: CHANNEL_BUCKETS[mix(row, 2) % CHANNEL_BUCKETS.length],
    tenant: tenantDraw < plan.tenantCount ? tenantDraw : undefined,
    topic: topicDraw < plan.topicCount ? topicDraw : undefined,
    read: mix(row, 5) % 3 === 0,
  };
}

const PROVIDER_BY_CHANNEL: Record<DeliveryChannel, string> = {
  in_app: 'novu',
  email: 'sendgrid',
  sms: 'twilio',
  push: 'fcm',
  chat: 'slack',
};

/** Creates the plan's subscribers (through the store, so they are exactly what the API writes) and topics. */
export async function seedSubscribers(db: Kysely<Database>, store: Store, plan: ListSeedPlan): Promise<void> {
  const at = new Date(plan.originMs).toISOString();
  for (let index = 0; index < plan.subscriberCount; index++) {
    const id = newId(plan.originMs);
    await store.subscribers.create({
      _id: id,
      _organizationId: plan.organizationId,
      _environmentId: plan.environmentId,
      subscriberId: externalSubscriberId(index),
      firstName: `First${index}`,
      lastName: `Last${index}`,
      email: `subscriber${index}@example.com`,
      phone: `+1555${String(index).padStart(7, '0')}`,
      locale: 'en-US',
      timezone: 'Europe/Paris',
      data: { plan: index % 2 ? 'pro' : 'free' },
      channels: [],
      topics: [],
      __v: 0,
      deleted: false,
      createdAt: at,
      updatedAt: at,
    });
    plan.subscriberIds[index] = id;
  }
  const topics = Array.from({ length: plan.topicCount }, (_, index) => ({
    id: newId(plan.originMs),
    environment_id: plan.environmentId,
    organization_id: plan.organizationId,
    key: topicKey(index),
    name: `Bench topic ${index}`,
    created_at: at,
    updated_at: at,
  }));
  await db.insertInto('topics').values(topics).execute();
  plan.topicIds = topics.map((topic) => topic.id);
}

interface SeedBatch {
  notifications: NotificationsTable[];
  notificationTopics: NotificationTopicsTable[];
  jobs: JobsTable[];
  details: ExecutionDetailsTable[];
  messages: MessagesTable[];
}

function emptyBatch(): SeedBatch {
  return { notifications: [], notificationTopics: [], jobs: [], details: [], messages: [] };
}

function addRow(plan: ListSeedPlan, row: number, batch: SeedBatch): void {
  const shape = rowShape(plan, row);
  const createdMs = plan.originMs + row * plan.stepMs;
  const createdAt = new Date(createdMs).toISOString();
  const sentAt = new Date(createdMs + 40).toISOString();
  const notificationId = newId(createdMs);
  const jobId = newId(createdMs);
  const messageId = newId(createdMs);
  const subscriberId = plan.subscriberIds[shape.subscriber];
  const externalId = externalSubscriberId(shape.subscriber);
  const email = `subscriber${shape.subscriber}@example.com`;
  const transactionId = transactionIdOf(row);
  const contextKeys = shape.tenant === undefined ? [] : [tenantKey(shape.tenant)];
  const contextKeysNorm = normalizeContextKeys(contextKeys);
  const providerId = PROVIDER_BY_CHANNEL[shape.channel];
  const payload = { orderId: `ORD-${100000 + row}`, amount: (row % 9973) / 100, items: [{ sku: `SKU-${row % 500}`, quantity: 1 + (row % 3) }] };
  const stepId = `${plan.templateId.slice(0, 16)}${shape.channel.padEnd(8, '0').slice(0, 8)}`;
  const topics = shape.topic === undefined ? [] : [{ _topicId: plan.topicIds[shape.topic], topicKey: topicKey(shape.topic) }];

  batch.notifications.push({
    id: notificationId,
    environment_id: plan.environmentId,
    organization_id: plan.organizationId,
    subscriber_id: subscriberId,
    external_subscriber_id: externalId,
    subscriber_email: email,
    template_id: plan.templateId,
    transaction_id: transactionId,
    digested_notification_id: null,
    channels_mask: channelsToMask([shape.channel]),
    severity: 'none',
    context_keys_norm: contextKeysNorm,
    document: JSON.stringify({
      channels: [shape.channel],
      subscriber: { subscriberId: externalId, _id: subscriberId, firstName: `First${shape.subscriber}`, lastName: `Last${shape.subscriber}`, email },
      template: { _id: plan.templateId, name: 'Order shipped', triggers: [{ type: 'event', identifier: plan.templateIdentifier, variables: [] }], origin: 'external' },
      payload,
      controls: {},
      to: { subscriberId: externalId },
      tags: ['orders'],
      topics,
      severity: 'none',
      critical: false,
      contextKeys,
    }),
    created_at: createdAt,
    updated_at: sentAt,
  });
  for (const topic of topics) {
    batch.notificationTopics.push({
      notification_id: notificationId,
      environment_id: plan.environmentId,
      topic_id: topic._topicId,
      topic_key: topic.topicKey,
      subscription_id: null,
      created_at: createdAt,
    });
  }
  batch.jobs.push({
    id: jobId,
    environment_id: plan.environmentId,
    organization_id: plan.organizationId,
    notification_id: notificationId,
    subscriber_id: subscriberId,
    transaction_id: transactionId,
    template_id: plan.templateId,
    step_index: 0,
    type: shape.channel,
    status: 'completed',
    provider_id: providerId,
    digest_group: null,
    document: JSON.stringify({ step: { _id: stepId, active: true, filters: [], _templateId: plan.templateId, name: `${shape.channel} step` }, payload }),
    created_at: createdAt,
    updated_at: sentAt,
  });
  const details: Array<[string, string, string]> = [
    ['Pending', 'Step queued', createdAt],
    ['Success', 'Message sent', sentAt],
  ];
  for (const [status, detail, at] of details) {
    batch.details.push({
      id: newId(createdMs),
      environment_id: plan.environmentId,
      job_id: jobId,
      notification_id: notificationId,
      status,
      detail,
      is_retry: 0,
      is_test: 0,
      provider_id: providerId,
      raw: null,
      source: 'Internal',
      created_at: at,
    });
  }
  batch.messages.push({
    id: messageId,
    environment_id: plan.environmentId,
    organization_id: plan.organizationId,
    notification_id: notificationId,
    subscriber_id: subscriberId,
    external_subscriber_id: externalId,
    template_id: plan.templateId,
    job_id: jobId,
    transaction_id: transactionId,
    channel: shape.channel,
    read: shape.read ? 1 : 0,
    seen: shape.read ? 1 : 0,
    status: 'sent',
    context_keys_norm: contextKeysNorm,
    deleted: 0,
    document: JSON.stringify({
      _messageTemplateId: null,
      templateIdentifier: plan.templateIdentifier,
      deliveredAt: [sentAt],
      content: `Hello First${shape.subscriber}, your order ORD-${100000 + row} has shipped and is on its way. Track it any time from your account.`,
      subject: shape.channel === 'email' ? `Your order ORD-${100000 + row} has shipped` : undefined,
      ...(shape.channel === 'email' ? { email } : {}),
      ...(shape.channel === 'sms' ? { phone: `+1555${String(shape.subscriber).padStart(7, '0')}` } : {}),
      providerId,
      cta: shape.channel === 'in_app' ? { type: 'redirect', data: { url: `/orders/ORD-${100000 + row}` } } : {},
      _feedId: null,
      payload,
      overrides: {},
      contextKeys,
      ...(shape.read ? { lastSeenDate: sentAt, lastReadDate: sentAt } : {}),
    }),
    created_at: createdAt,
    updated_at: sentAt,
  });
}

export type SeedDialect = 'sqlite' | 'postgres';

/** Bound parameters per statement: SQLite's limit is 32,766 and PostgreSQL's 65,535; stay under both. */
const MAX_PARAMETERS: Record<SeedDialect, number> = { sqlite: 30_000, postgres: 60_000 };

async function insertRows<T extends keyof Database>(trx: Transaction<Database>, table: T, rows: Database[T][], maxParameters: number): Promise<void> {
  if (rows.length === 0) return;
  const perStatement = Math.max(1, Math.floor(maxParameters / Object.keys(rows[0] as object).length));
  for (let start = 0; start < rows.length; start += perStatement) {
    // Kysely's insert types are per table; the rows are exactly the table's Selectable shape.
    await trx.insertInto(table).values(rows.slice(start, start + perStatement) as never).execute();
  }
}

export interface SeedProgress {
  done: number;
  total: number;
  elapsedMs: number;
}

/**
 * Writes rows [from, to): per row one notification event (plus its topic link, if any), one job, two
 * execution details and one message. One transaction per `rowsPerTransaction` rows.
 */
export async function seedListRows(
  db: Kysely<Database>,
  plan: ListSeedPlan,
  from: number,
  to: number,
  options: { dialect: SeedDialect; rowsPerTransaction?: number; onProgress?: (progress: SeedProgress) => void },
): Promise<void> {
  if (plan.subscriberIds.length !== plan.subscriberCount) throw new Error('seedSubscribers must run before seedListRows');
  const perTransaction = options.rowsPerTransaction ?? 10_000;
  const maxParameters = MAX_PARAMETERS[options.dialect];
  const started = Date.now();
  for (let start = from; start < to; start += perTransaction) {
    const end = Math.min(to, start + perTransaction);
    const batch = emptyBatch();
    for (let row = start; row < end; row++) addRow(plan, row, batch);
    await db.transaction().execute(async (trx) => {
      await insertRows(trx, 'notifications', batch.notifications, maxParameters);
      await insertRows(trx, 'notification_topics', batch.notificationTopics, maxParameters);
      await insertRows(trx, 'jobs', batch.jobs, maxParameters);
      await insertRows(trx, 'execution_details', batch.details, maxParameters);
      await insertRows(trx, 'messages', batch.messages, maxParameters);
      const counters = new MessageCounterDeltas(options.dialect);
      for (const message of batch.messages) counters.add(message, 1);
      await counters.apply(trx);
    });
    options.onProgress?.({ done: end - from, total: to - from, elapsedMs: Date.now() - started });
  }
}

/**
 * Filter values that select rows at every size up to `rows`: a subscriber, a channel, a transactionId
 * and a time window from the middle of the data, a tenant context key and a topic key.
 */
export interface SeedProbes {
  subscriberId: string;
  channel: DeliveryChannel;
  transactionId: string;
  contextKey: string;
  topicKey: string;
  /** A window of ~1 % of the rows (at least 100) around the middle of the data. */
  after: string;
  before: string;
}

export function seedProbes(plan: ListSeedPlan, rows: number): SeedProbes {
  const middle = Math.floor(rows / 2);
  const halfWindow = Math.max(50, Math.floor(rows / 200));
  return {
    subscriberId: externalSubscriberId(rowShape(plan, middle).subscriber),
    channel: 'sms',
    transactionId: transactionIdOf(middle),
    contextKey: tenantKey(3),
    topicKey: topicKey(3),
    after: createdAtOf(plan, Math.max(0, middle - halfWindow)),
    before: createdAtOf(plan, Math.min(rows - 1, middle + halfWindow)),
  };
}
