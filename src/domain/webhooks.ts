import type { Message } from './types.js';
import type { Workflow } from './workflow.js';

/**
 * Outbound webhooks: the event catalogue, the body every event is sent as, the retry schedule and the pure rules of
 * endpoints (filters, the failure window that disables one). Names and shapes follow Novu's webhook events.
 */

export const WEBHOOK_EVENT_TYPES = [
  'message.sent',
  'message.failed',
  'message.delivered',
  'message.seen',
  'message.read',
  'message.unread',
  'message.archived',
  'message.unarchived',
  'message.snoozed',
  'message.unsnoozed',
  'message.deleted',
  'message.bounced',
  'message.complained',
  'message.opened',
  'message.clicked',
  'preference.updated',
  'workflow.created',
  'workflow.updated',
  'workflow.deleted',
  'webhook.test',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'message.sent': 'A channel step handed its message to the provider (in-app: stored for the Inbox)',
  'message.failed': 'A channel step gave up: the message is recorded with status error',
  'message.delivered': 'The message reached the subscriber (in-app at once; other channels from provider reports)',
  'message.seen': 'An in-app message was marked seen',
  'message.read': 'An in-app message was marked read',
  'message.unread': 'An in-app message was marked unread',
  'message.archived': 'An in-app message was archived',
  'message.unarchived': 'An in-app message was unarchived',
  'message.snoozed': 'An in-app message was snoozed',
  'message.unsnoozed': 'An in-app message was unsnoozed, or its snooze ended',
  'message.deleted': 'A message was deleted',
  'message.bounced': 'The provider reported a bounce',
  'message.complained': 'The provider reported a spam complaint',
  'message.opened': 'The provider reported an open',
  'message.clicked': 'The provider reported a click',
  'preference.updated': "A subscriber's global or workflow preference changed",
  'workflow.created': 'A workflow was created',
  'workflow.updated': 'A workflow was changed',
  'workflow.deleted': 'A workflow was deleted',
  'webhook.test': 'A test event sent from the endpoint API or the dashboard',
};

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** What a change announces: the event's type, the kind of record, and the record after (and before) the change. */
export interface DomainEvent {
  type: WebhookEventType;
  object: 'message' | 'preference' | 'workflow' | 'webhook';
  data: { object: Record<string, unknown>; previousObject?: Record<string, unknown>; error?: { message: string; code?: string } };
}

/** The JSON body POSTed to endpoints; `id` is also the `webhook-id` header, the same on every retry. */
export interface WebhookEventBody extends DomainEvent {
  id: string;
  /** ISO 8601, when the change happened. */
  timestamp: string;
  environmentId: string;
}

/** Bytes of a receiver's answer kept in the attempt log. */
export const RESPONSE_SNIPPET_LIMIT = 1024;

/** How long the secret before a rotation keeps signing next to the new one. */
export const SECRET_ROTATION_OVERLAP_MS = 24 * 3_600_000;

/**
 * The delay before attempt `next` (1-based: attempt 2 is the first retry), or undefined when the schedule is used up.
 * `delays` is config.webhooks.retryDelaysMs: `delays[0]` is the first attempt's own delay (0, immediate).
 */
export function retryDelayBefore(delays: readonly number[], next: number): number | undefined {
  return next >= 1 && next <= delays.length ? delays[next - 1] : undefined;
}

/** Whether an endpoint's filter lets an event type through (an empty filter takes every event). */
export function endpointAccepts(eventTypes: readonly string[], type: string): boolean {
  return eventTypes.length === 0 || eventTypes.includes(type);
}

/** Whether an endpoint failing since `failingSince` (ISO) has failed long enough to be disabled at `now`. */
export function shouldDisable(failingSince: string | undefined, now: number, disableAfterMs: number): boolean {
  return failingSince !== undefined && now - Date.parse(failingSince) >= disableAfterMs;
}

export function disabledReason(failingSince: string, now: number): string {
  const days = ((now - Date.parse(failingSince)) / 86_400_000).toFixed(1);
  return `Disabled automatically: every delivery attempt failed for ${days} days (since ${failingSince})`;
}

/** Cuts a receiver's answer for the attempt log. */
export function snippetOf(text: string): string {
  return text.length <= RESPONSE_SNIPPET_LIMIT ? text : `${text.slice(0, RESPONSE_SNIPPET_LIMIT)}…[truncated ${text.length - RESPONSE_SNIPPET_LIMIT} chars]`;
}

/**
 * A message as message events carry it (`data.object`): the fields Novu's payload has, without the embedded
 * subscriber and workflow documents.
 */
export function messageEventObject(message: Message): Record<string, unknown> {
  const stepId = message.template?.steps?.find((step) => step._id === message._messageTemplateId) as { stepId?: string } | undefined;
  const object: Record<string, unknown> = {
    _id: message._id,
    _environmentId: message._environmentId,
    _organizationId: message._organizationId,
    _notificationId: message._notificationId,
    _subscriberId: message._subscriberId,
    _templateId: message._templateId ?? null,
    _messageTemplateId: message._messageTemplateId ?? null,
    _jobId: message._jobId ?? null,
    transactionId: message.transactionId,
    channel: message.channel,
    subscriberId: message.subscriber?.subscriberId ?? null,
    workflowId: message.templateIdentifier ?? null,
    templateIdentifier: message.templateIdentifier ?? null,
    stepId: stepId?.stepId ?? null,
    status: message.status,
    read: message.read,
    seen: message.seen,
    archived: message.archived ?? false,
    snoozedUntil: message.snoozedUntil ?? null,
    deliveredAt: message.deliveredAt ?? [],
    lastSeenDate: message.lastSeenDate ?? null,
    lastReadDate: message.lastReadDate ?? null,
    providerId: message.providerId ?? null,
    errorId: message.errorId ?? null,
    errorText: message.errorText ?? null,
    subject: message.subject ?? null,
    content: message.content ?? null,
    email: message.email ?? null,
    phone: message.phone ?? null,
    contextKeys: message.contextKeys ?? [],
    tags: message.tags ?? [],
    deleted: message.deleted ?? false,
    createdAt: message.createdAt,
    updatedAt: message.updatedAt ?? message.createdAt,
  };
  return object;
}

/**
 * A message event. `subscriberId` (the external one) is needed when the message was read without its subscriber
 * record (the Inbox routes know it from their caller).
 */
export function messageEvent(
  type: WebhookEventType,
  message: Message,
  extra: { previous?: Message; error?: { message: string; code?: string }; subscriberId?: string } = {},
): DomainEvent {
  const object = messageEventObject(message);
  if (extra.subscriberId && object.subscriberId === null) object.subscriberId = extra.subscriberId;
  const data: DomainEvent['data'] = { object };
  if (extra.previous) {
    data.previousObject = messageEventObject(extra.previous);
    if (extra.subscriberId && data.previousObject.subscriberId === null) data.previousObject.subscriberId = extra.subscriberId;
  }
  if (extra.error) data.error = extra.error;
  return { type, object: 'message', data };
}

/** The event of a mark-as or Inbox action, or undefined for those Novu announces none of (unseen, complete, revert). */
export function messageActionEventType(action: string): WebhookEventType | undefined {
  const types: Record<string, WebhookEventType> = {
    read: 'message.read',
    seen: 'message.seen',
    unread: 'message.unread',
    archive: 'message.archived',
    'read-archive': 'message.archived',
    unarchive: 'message.unarchived',
    snooze: 'message.snoozed',
    unsnooze: 'message.unsnoozed',
    delete: 'message.deleted',
  };
  return types[action];
}

/** A workflow as workflow events carry it. */
export function workflowEventObject(workflow: Workflow): Record<string, unknown> {
  return {
    _id: workflow._id,
    _environmentId: workflow._environmentId,
    _organizationId: workflow._organizationId,
    workflowId: workflow.workflowId,
    name: workflow.name,
    description: workflow.description,
    tags: workflow.tags,
    active: workflow.active,
    critical: workflow.critical,
    severity: workflow.severity,
    origin: workflow.origin,
    steps: workflow.steps.map((step) => ({ _id: step._id, stepId: step.stepId, name: step.name, type: step.type })),
    preferenceSettings: workflow.preferenceSettings,
    deleted: workflow.deleted,
    createdAt: workflow.createdAt,
    updatedAt: workflow.updatedAt,
  };
}

export function workflowEvent(type: 'workflow.created' | 'workflow.updated' | 'workflow.deleted', workflow: Workflow, previous?: Workflow): DomainEvent {
  const data: DomainEvent['data'] = { object: workflowEventObject(workflow) };
  if (previous) data.previousObject = workflowEventObject(previous);
  return { type, object: 'workflow', data };
}

/** An outbound endpoint (its signing secret is kept apart: only `getSecrets` reads it). */
export interface WebhookEndpoint {
  _id: string;
  _environmentId: string;
  url: string;
  description: string;
  /** Empty: every event type. */
  eventTypes: string[];
  enabled: boolean;
  /** Extra request headers sent with every event (stored encrypted: they often carry a token). */
  headers: Record<string, string>;
  /** Why the endpoint was disabled automatically; cleared when it is enabled again. */
  disabledReason?: string;
  /** The first failed attempt since the last success; undefined while the endpoint is healthy. */
  failingSince?: string;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookSecrets {
  current: string;
  /** The secret before the last rotation, still signing until `previousExpiresAt`. */
  previous?: string;
  previousExpiresAt?: string;
}

export type WebhookAttemptStatus = 'pending' | 'success' | 'failed';

/** One try at delivering one event to one endpoint; a failure schedules the next try as a new pending attempt. */
export interface WebhookAttempt {
  _id: string;
  _environmentId: string;
  _endpointId: string;
  /** The event's id: its body `id` and `webhook-id` header. */
  webhookId: string;
  eventType: string;
  /** 1-based position in the retry schedule. */
  attempt: number;
  status: WebhookAttemptStatus;
  responseStatusCode?: number;
  durationMs: number;
  responseBodySnippet: string;
  /** Why a try failed without an HTTP answer (timeout, connection refused, refused by the address guard). */
  error?: string;
  /** When this try is due. */
  dueAt: string;
  createdAt: string;
  finishedAt?: string;
}

/** `whsec_` + base64 of 32 random bytes (the Standard Webhooks secret format). */
export function isWebhookSecret(value: string): boolean {
  return /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(value);
}

/** `preference.updated`: one subscriber's global record, or its record for one workflow, as now stored. */
export function preferenceEvent(input: {
  environmentId: string;
  subscriber: { _id: string; subscriberId: string };
  level: 'global' | 'workflow';
  workflow?: { _id: string; workflowId: string };
  preference: Record<string, unknown>;
  previous?: Record<string, unknown>;
  updatedAt: string;
}): DomainEvent {
  const object = (preference: Record<string, unknown>) => ({
    _environmentId: input.environmentId,
    _subscriberId: input.subscriber._id,
    subscriberId: input.subscriber.subscriberId,
    level: input.level,
    _templateId: input.workflow?._id ?? null,
    workflowId: input.workflow?.workflowId ?? null,
    preference,
    updatedAt: input.updatedAt,
  });
  const data: DomainEvent['data'] = { object: object(input.preference) };
  if (input.previous) data.previousObject = object(input.previous);
  return { type: 'preference.updated', object: 'preference', data };
}
