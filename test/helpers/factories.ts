import { randomBytes } from 'node:crypto';
import { newId } from '../../src/domain/ids.js';
import type {
  DeliveryChannel,
  ExecutionDetail,
  Message,
  NotificationEvent,
  StepType,
  Subscriber,
} from '../../src/domain/types.js';
import type { Store, StoredJob } from '../../src/store/ports.js';

/**
 * Realistic records inserted through the store, for tests that need messages and notification events
 * without running the workflow engine. Every builder takes overrides; every insert goes through the
 * Store's repositories (so the denormalised columns are filled exactly as in production).
 */
export interface Scope {
  environmentId: string;
  organizationId: string;
}

/** The organization of an environment, for building records of that environment. */
export async function scopeOf(store: Store, environmentId: string): Promise<Scope> {
  const environment = await store.tenancy.getEnvironment(environmentId);
  if (!environment) throw new Error(`no environment ${environmentId}`);
  return { environmentId, organizationId: environment._organizationId };
}

/** A new organization with one environment ('development'), stored: the scope a store-level test writes in. */
export async function createScope(store: Store): Promise<Scope> {
  const createdAt = new Date().toISOString();
  const organization = { _id: newId(), name: 'Acme', createdAt };
  await store.tenancy.createOrganization(organization);
  const environment = { _id: newId(), _organizationId: organization._id, name: 'development', createdAt };
  await store.tenancy.createEnvironment(environment);
  return { environmentId: environment._id, organizationId: organization._id };
}

function token(bytes = 4): string {
  return randomBytes(bytes).toString('hex');
}

export function buildSubscriber(scope: Scope, overrides: Partial<Subscriber> = {}): Subscriber {
  const now = new Date().toISOString();
  return {
    _id: newId(),
    _organizationId: scope.organizationId,
    _environmentId: scope.environmentId,
    subscriberId: `user-${token()}`,
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: `ada-${token()}@example.com`,
    phone: '+15550100',
    avatar: null,
    locale: 'en-GB',
    timezone: 'Europe/London',
    channels: [],
    topics: [],
    isOnline: null,
    lastOnlineAt: null,
    __v: 0,
    data: null,
    deleted: false,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

export async function insertSubscriber(store: Store, scope: Scope, overrides: Partial<Subscriber> = {}): Promise<Subscriber> {
  const subscriber = buildSubscriber(scope, overrides);
  await store.subscribers.create(subscriber);
  return subscriber;
}

export function buildMessage(subscriber: Subscriber, overrides: Partial<Message> = {}): Message {
  const channel: DeliveryChannel = overrides.channel ?? 'in_app';
  const createdAt = overrides.createdAt ?? new Date().toISOString();
  const message: Message = {
    _id: newId(),
    _templateId: newId(),
    _environmentId: subscriber._environmentId,
    _messageTemplateId: newId(),
    _organizationId: subscriber._organizationId,
    _notificationId: newId(),
    _subscriberId: subscriber._id,
    _jobId: newId(),
    templateIdentifier: 'welcome',
    createdAt,
    updatedAt: createdAt,
    deliveredAt: [createdAt],
    transactionId: `tx-${token(6)}`,
    channel,
    read: false,
    seen: false,
    cta: channel === 'in_app' ? { type: 'redirect', data: { url: 'https://example.com/welcome' } } : {},
    _feedId: null,
    status: 'sent',
    payload: { orderId: 42 },
    overrides: {},
    contextKeys: [],
    ...channelFields(channel, subscriber),
    ...overrides,
  };
  return message;
}

function channelFields(channel: DeliveryChannel, subscriber: Subscriber): Partial<Message> {
  switch (channel) {
    case 'in_app':
      return { content: 'Hello Ada', subject: 'Welcome', providerId: 'novu' };
    case 'email':
      return {
        content: [{ type: 'text', content: 'Hello Ada' }, { type: 'button', content: 'Open', url: 'https://example.com' }],
        subject: 'Welcome',
        email: subscriber.email ?? 'ada@example.com',
        providerId: 'sendgrid',
      };
    case 'sms':
      return { content: 'Hello Ada', phone: subscriber.phone ?? '+15550100', providerId: 'twilio' };
    case 'chat':
      return { content: 'Hello Ada', directWebhookUrl: 'https://chat.example.com/hook', providerId: 'slack' };
    case 'push':
      return { content: 'Hello Ada', title: 'Welcome', deviceTokens: ['device-1'], providerId: 'fcm' };
  }
}

export async function insertMessage(store: Store, subscriber: Subscriber, overrides: Partial<Message> = {}): Promise<Message> {
  const { message } = await store.messages.create(buildMessage(subscriber, overrides));
  return message;
}

/** Inserts many messages with multi-row statements, in transactions of 1,000. */
export async function insertMessages(store: Store, messages: Message[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 1000) {
    const batch = messages.slice(i, i + 1000);
    await store.transaction((tx) => tx.messages.createMany(batch));
  }
}

const PROVIDER_BY_TYPE: Partial<Record<StepType, string>> = { in_app: 'novu', email: 'sendgrid', sms: 'twilio', chat: 'slack', push: 'fcm' };

export interface BuiltEvent {
  event: NotificationEvent;
  jobs: StoredJob[];
}

/**
 * An event with one job per entry of `channels` (default in_app then email), each with a queued and a
 * final execution detail. A `digest` entry gets digest metadata.
 */
export function buildNotificationEvent(subscriber: Subscriber, overrides: Partial<NotificationEvent> = {}): BuiltEvent {
  const createdAt = overrides.createdAt ?? new Date().toISOString();
  const templateId = overrides._templateId ?? newId();
  const event: NotificationEvent = {
    _id: newId(),
    _environmentId: subscriber._environmentId,
    _organizationId: subscriber._organizationId,
    _subscriberId: subscriber._id,
    transactionId: `tx-${token(6)}`,
    _templateId: templateId,
    createdAt,
    updatedAt: createdAt,
    channels: ['in_app', 'email'],
    subscriber: {
      subscriberId: subscriber.subscriberId,
      _id: subscriber._id,
      ...(subscriber.firstName ? { firstName: subscriber.firstName } : {}),
      ...(subscriber.lastName ? { lastName: subscriber.lastName } : {}),
      ...(subscriber.email ? { email: subscriber.email } : {}),
      ...(subscriber.phone ? { phone: subscriber.phone } : {}),
    },
    template: {
      _id: templateId,
      name: 'Welcome',
      triggers: [{ type: 'event', identifier: 'welcome', variables: [{ name: 'orderId' }] }],
      origin: 'external',
    },
    payload: { orderId: 42 },
    controls: {},
    to: { subscriberId: subscriber.subscriberId },
    tags: ['onboarding'],
    topics: [],
    severity: 'none',
    critical: false,
    contextKeys: [],
    ...overrides,
  };
  const jobs = (event.channels ?? []).map((type, stepIndex) => buildJob(event, type, stepIndex, createdAt));
  return { event, jobs };
}

function buildJob(event: NotificationEvent, type: StepType, stepIndex: number, createdAt: string): StoredJob {
  const providerId = PROVIDER_BY_TYPE[type] ?? 'novu';
  const detail = (status: ExecutionDetail['status'], text: string, offsetMs: number): ExecutionDetail => ({
    _id: newId(),
    createdAt: new Date(Date.parse(createdAt) + offsetMs).toISOString(),
    status,
    detail: text,
    isRetry: false,
    isTest: false,
    providerId,
    raw: status === 'Success' ? JSON.stringify({ id: `provider-${stepIndex}` }) : null,
    source: 'Internal',
  });
  const job: StoredJob = {
    _id: newId(),
    _environmentId: event._environmentId,
    _organizationId: event._organizationId,
    _notificationId: event._id,
    _subscriberId: event._subscriberId,
    transactionId: event.transactionId,
    _templateId: event._templateId,
    stepIndex,
    type,
    providerId,
    status: 'completed',
    step: { _id: newId(), active: true, filters: [], _templateId: newId(), name: `${type} step`, _parentId: null, metadata: {} },
    payload: event.payload,
    overrides: {},
    executionDetails: [detail('Pending', 'Step queued', 0), detail('Success', 'Message sent', 5)],
    createdAt,
    updatedAt: createdAt,
  };
  if (type === 'digest') {
    job.digest = { type: 'regular', amount: 5, unit: 'minutes', digestKey: 'orderId', events: [{ orderId: 42 }], backoff: false };
    job.scheduleExtensionsCount = 0;
  }
  return job;
}

export async function insertNotificationEvent(
  store: Store,
  subscriber: Subscriber,
  overrides: Partial<NotificationEvent> = {},
): Promise<NotificationEvent & { jobs: StoredJob[] }> {
  const built = buildNotificationEvent(subscriber, overrides);
  await insertNotificationEvents(store, [built]);
  return { ...built.event, jobs: built.jobs };
}

/** Inserts events with their jobs and execution details, in transactions of 500 events. */
export async function insertNotificationEvents(store: Store, events: BuiltEvent[]): Promise<void> {
  for (let i = 0; i < events.length; i += 500) {
    const batch = events.slice(i, i + 500);
    await store.transaction(async (tx) => {
      await tx.notifications.createMany(batch.map(({ event }) => event));
      await tx.jobs.createMany(batch.flatMap(({ jobs }) => jobs));
    });
  }
}

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so a volume test failure reproduces. */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
