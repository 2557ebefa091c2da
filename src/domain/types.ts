/**
 * Herald's domain records, in the shapes the spec (shared/spec/notification-api.md) gives them.
 * These are what repositories return and use-cases work with; HTTP schemas mirror them.
 * Timestamps are ISO 8601 UTC strings with milliseconds.
 */

export const DELIVERY_CHANNELS = ['in_app', 'email', 'sms', 'chat', 'push'] as const;
export type DeliveryChannel = (typeof DELIVERY_CHANNELS)[number];

/** Every step/job type; the delivery channels plus the action steps. */
export const STEP_TYPES = [
  'in_app', 'email', 'sms', 'chat', 'push', 'digest', 'trigger', 'delay', 'throttle', 'custom', 'http_request',
] as const;
export type StepType = (typeof STEP_TYPES)[number];

export const INTEGRATION_KINDS = ['delivery', 'agent'] as const;
export type IntegrationKind = (typeof INTEGRATION_KINDS)[number];

export const TIME_UNITS = ['seconds', 'minutes', 'hours', 'days', 'weeks', 'months'] as const;
export type TimeUnit = (typeof TIME_UNITS)[number];

export const SEVERITIES = ['high', 'medium', 'low', 'none'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const MESSAGE_STATUSES = ['sent', 'error', 'warning'] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const JOB_STATUSES = [
  'pending', 'queued', 'running', 'completed', 'failed', 'delayed', 'canceled', 'merged', 'skipped',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const EXECUTION_DETAIL_STATUSES = ['Success', 'Warning', 'Failed', 'Pending', 'Queued', 'ReadConfirmation'] as const;
export type ExecutionDetailStatus = (typeof EXECUTION_DETAIL_STATUSES)[number];

export const EXECUTION_DETAIL_SOURCES = ['Credentials', 'Internal', 'Payload', 'Webhook'] as const;
export type ExecutionDetailSource = (typeof EXECUTION_DETAIL_SOURCES)[number];

export const MARK_AS_VALUES = ['read', 'seen', 'unread', 'unseen'] as const;
export type MarkAs = (typeof MARK_AS_VALUES)[number];

// ---- Step filters -------------------------------------------------------------------------

export const FILTER_OPERATORS = [
  'LARGER', 'SMALLER', 'LARGER_EQUAL', 'SMALLER_EQUAL', 'EQUAL', 'NOT_EQUAL', 'ALL_IN', 'ANY_IN', 'NOT_IN',
  'BETWEEN', 'NOT_BETWEEN', 'LIKE', 'NOT_LIKE', 'IN',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export const FILTER_TYPES = ['BOOLEAN', 'TEXT', 'DATE', 'NUMBER', 'STATEMENT', 'LIST', 'MULTI_LIST', 'GROUP'] as const;
export type FilterType = (typeof FILTER_TYPES)[number];

export const FILTER_SOURCES = ['subscriber', 'payload'] as const;
export type FilterSource = (typeof FILTER_SOURCES)[number];

export interface FieldFilterPart {
  field: string;
  value: string;
  operator: FilterOperator;
  on: FilterSource;
}

export interface StepFilter {
  isNegated: boolean;
  type: FilterType;
  value: 'AND' | 'OR';
  children: FieldFilterPart[];
}

// ---- Tenancy and auth ------------------------------------------------------------------------

export interface Organization {
  _id: string;
  name: string;
  createdAt: string;
}

export interface Environment {
  _id: string;
  _organizationId: string;
  name: string;
  /** Public application identifier (the `applicationIdentifier` the Inbox clients send); not a secret. */
  identifier: string;
  createdAt: string;
}

export const USER_ROLES = ['admin', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];

/**
 * Who is calling: resolved by the auth hook (http/auth.ts) from the Authorization header or, for a signed-in
 * dashboard user, the session cookie.
 */
export type Caller = ServerCaller | SubscriberCaller;

/** A server-side caller (API key), a Bearer session or a signed-in dashboard user: sees the whole environment. */
export interface ServerCaller {
  kind: 'apiKey' | 'session' | 'dashboard';
  environmentId: string;
  organizationId: string;
  /** The API key id, the session subject or the dashboard user id; recorded as `deletedBy` and similar. */
  actorId: string;
  /** Dashboard callers: the signed-in user's role. */
  role?: UserRole;
}

/** Credentials go to Bearer session callers and dashboard admins, never to API keys or dashboard viewers. */
export function canSeeCredentials(caller: Caller): boolean {
  return caller.kind === 'session' || (caller.kind === 'dashboard' && caller.role === 'admin');
}

/** An Inbox caller (subscriber session token): one subscriber's in-app messages and preferences, /v1/inbox/* only. */
export interface SubscriberCaller {
  kind: 'subscriber';
  environmentId: string;
  organizationId: string;
  /** The subscriber record's `_id`. */
  actorId: string;
  subscriberRecordId: string;
  /** The subscriber's own subscriberId. */
  subscriberId: string;
}

// ---- Integrations ------------------------------------------------------------------------------

/** Provider credentials, as the spec's Credentials object (all optional). */
export type Credentials = Record<string, unknown>;

export interface IntegrationConfigurations {
  inboundWebhookEnabled?: boolean;
  inboundWebhookSigningKey?: string;
}

export interface Integration {
  _id: string;
  _environmentId: string;
  _organizationId: string;
  name: string;
  identifier: string;
  providerId: string;
  channel?: DeliveryChannel;
  kind: IntegrationKind;
  /** Decrypted; only ever serialized for session callers. */
  credentials: Credentials;
  configurations: IntegrationConfigurations;
  active: boolean;
  deleted: boolean;
  deletedAt?: string;
  deletedBy?: string;
  primary: boolean;
  /** Higher wins when choosing among active integrations of a channel. */
  priority: number;
  conditions: StepFilter[];
  createdAt: string;
  updatedAt: string;
}

// ---- Subscribers -------------------------------------------------------------------------------

export interface ChannelCredentials {
  webhookUrl?: string;
  channel?: string;
  deviceTokens?: string[];
  alertUid?: string;
  title?: string;
  imageUrl?: string;
  state?: string;
  externalUrl?: string;
}

export interface ChannelSettings {
  providerId: string;
  integrationIdentifier?: string;
  credentials: ChannelCredentials;
  _integrationId: string;
}

export interface Subscriber {
  _id: string;
  _organizationId: string;
  _environmentId: string;
  subscriberId: string;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  avatar?: string | null;
  locale?: string | null;
  timezone?: string | null;
  channels: ChannelSettings[];
  topics: string[];
  isOnline?: boolean | null;
  lastOnlineAt?: string | null;
  __v: number;
  data?: Record<string, unknown> | null;
  deleted: boolean;
  createdAt: string;
  updatedAt: string;
}

// ---- Workflows (the spec's Workflow shape, used as a message's / event's `template`) ----------

export interface DigestTimedConfig {
  atTime?: string;
  weekDays?: Array<'monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday'>;
  monthDays?: number[];
  ordinal?: '1' | '2' | '3' | '4' | '5' | 'last';
  ordinalValue?: 'day' | 'weekday' | 'weekend' | 'sunday' | 'monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday';
  monthlyType?: 'each' | 'on';
  cronExpression?: string;
  untilDate?: string;
}

export interface DigestMetadata {
  type: 'regular' | 'backoff' | 'timed';
  digestKey?: string;
  amount?: number;
  unit?: TimeUnit;
  events?: Record<string, unknown>[];
  backoff?: boolean;
  updateMode?: boolean;
  backoffAmount?: number;
  backoffUnit?: TimeUnit;
  timed?: DigestTimedConfig;
}

export interface NotificationTrigger {
  type: 'event';
  identifier: string;
  variables: Array<{ name: string }>;
  subscriberVariables?: Array<{ name: string }>;
}

export interface NotificationStep {
  _id?: string;
  uuid?: string;
  name?: string;
  _templateId?: string;
  _parentId?: string;
  active?: boolean;
  shouldStopOnFail?: boolean;
  template?: Record<string, unknown>;
  filters?: StepFilter[];
  metadata?: Record<string, unknown>;
  replyCallback?: { active?: boolean; url?: string };
  variants?: Omit<NotificationStep, 'variants'>[];
}

export interface NotificationGroup {
  _id?: string;
  _parentId?: string;
  name: string;
  _environmentId: string;
  _organizationId: string;
}

/** The spec's Workflow shape: what a Message's `template` carries. */
export interface WorkflowTemplate {
  _id?: string;
  _parentId?: string;
  name: string;
  description: string;
  active: boolean;
  draft: boolean;
  critical: boolean;
  preferenceSettings: Partial<Record<DeliveryChannel, boolean>>;
  tags: string[];
  steps: NotificationStep[];
  triggers: NotificationTrigger[];
  _organizationId: string;
  _creatorId: string;
  _environmentId: string;
  _notificationGroupId: string;
  notificationGroup?: NotificationGroup;
  deleted: boolean;
  deletedAt: string;
  deletedBy: string;
  data?: Record<string, unknown>;
  workflowIntegrationStatus?: Record<string, unknown>;
}

// ---- Messages ------------------------------------------------------------------------------------

export interface EmailBlock {
  type: 'button' | 'text';
  content: string;
  url?: string;
  styles?: { textAlign: 'center' | 'left' | 'right' };
}

export interface MessageButton {
  type: 'primary' | 'secondary';
  content: string;
  resultContent?: string;
  /** Where the button leads (Novu v2 in-app `primaryAction.redirect`). */
  url?: string;
  target?: string;
}

export interface MessageCta {
  type?: 'redirect';
  data?: { url?: string; target?: string };
  action?: {
    status?: 'pending' | 'done';
    buttons?: MessageButton[];
    result?: { payload?: Record<string, unknown>; type?: 'primary' | 'secondary' };
  };
}

export interface Message {
  _id: string;
  _templateId?: string | null;
  _environmentId: string;
  _messageTemplateId?: string | null;
  _organizationId: string;
  _notificationId: string;
  _subscriberId: string;
  /** The job that produced it; not part of the spec shape, kept for idempotent steps. */
  _jobId?: string | null;
  subscriber?: Subscriber;
  template?: WorkflowTemplate;
  templateIdentifier?: string;
  createdAt: string;
  updatedAt?: string;
  deliveredAt?: string[];
  lastSeenDate?: string;
  lastReadDate?: string;
  content?: EmailBlock[] | string;
  transactionId: string;
  subject?: string;
  channel: DeliveryChannel;
  read: boolean;
  seen: boolean;
  snoozedUntil?: string;
  email?: string;
  phone?: string;
  directWebhookUrl?: string;
  providerId?: string;
  title?: string;
  deviceTokens?: string[];
  cta: MessageCta;
  _feedId?: string | null;
  status: MessageStatus;
  errorId?: string;
  errorText?: string;
  payload?: Record<string, unknown>;
  overrides?: Record<string, unknown>;
  contextKeys?: string[];
  deleted?: boolean;
  // Inbox state and presentation (in-app messages; the Inbox routes and realtime read these).
  archived?: boolean;
  archivedAt?: string;
  /** When the subscriber first saw it; `lastSeenDate` moves on every seen. */
  firstSeenDate?: string;
  /** From the workflow. */
  tags?: string[];
  /** From the workflow. */
  severity?: Severity;
  /** The in-app step's `data` control. */
  data?: Record<string, unknown>;
  /** The in-app step's `avatar` control. */
  avatar?: string;
  /** The vendor's own id of the sent message (Novu's `identifier`): provider delivery reports name the message by it. */
  identifier?: string;
  /** The last state a provider reported for it (docs/provider-delivery-reports.md); absent before any report. */
  providerStatus?: ProviderReportedState;
}

/** States a provider's delivery report can carry (domain/delivery-reports.ts maps each onto the message). */
export const PROVIDER_REPORTED_STATES = ['delivered', 'opened', 'clicked', 'bounced', 'complained', 'failed'] as const;
export type ProviderReportedState = (typeof PROVIDER_REPORTED_STATES)[number];

// ---- Notification events, jobs, execution details ------------------------------------------

export interface ExecutionDetail {
  _id: string;
  createdAt?: string;
  status: ExecutionDetailStatus;
  detail: string;
  isRetry: boolean;
  isTest: boolean;
  providerId?: string;
  raw?: string | null;
  source: ExecutionDetailSource;
}

export interface JobStep {
  _id: string;
  active: boolean;
  filters: StepFilter[];
  _templateId: string;
  name?: string;
  _parentId?: string | null;
  template?: Record<string, unknown>;
  variants?: JobStep[];
  replyCallback?: Record<string, unknown>;
  controlVariables?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  issues?: Record<string, unknown>;
}

export interface Job {
  _id: string;
  type: StepType;
  digest?: DigestMetadata;
  executionDetails: ExecutionDetail[];
  step: JobStep;
  overrides?: Record<string, unknown>;
  payload?: Record<string, unknown>;
  providerId: string;
  status: JobStatus;
  updatedAt?: string;
  scheduleExtensionsCount?: number;
}

export interface NotificationEventSubscriber {
  subscriberId: string;
  _id: string;
  firstName?: string;
  lastName?: string;
  email?: string;
  phone?: string;
}

export interface NotificationEventTemplate {
  _id?: string;
  name: string;
  triggers: NotificationTrigger[];
  origin?: 'platform-cloud' | 'platform-cloud-v1' | 'external';
}

export interface NotificationEvent {
  _id: string;
  _environmentId: string;
  _organizationId: string;
  _subscriberId: string;
  transactionId: string;
  _templateId?: string;
  _digestedNotificationId?: string;
  createdAt?: string;
  updatedAt?: string;
  channels?: StepType[];
  subscriber?: NotificationEventSubscriber;
  template?: NotificationEventTemplate;
  jobs?: Job[];
  payload?: Record<string, unknown>;
  controls?: Record<string, unknown>;
  to?: Record<string, unknown>;
  tags?: string[];
  topics?: Array<{ _topicId: string; topicKey: string }>;
  severity?: Severity;
  critical?: boolean;
  contextKeys?: string[];
}

// ---- Topics --------------------------------------------------------------------------------------

export interface Topic {
  _id: string;
  _environmentId: string;
  _organizationId: string;
  key: string;
  name?: string;
  createdAt: string;
  updatedAt: string;
}

export interface TopicSubscription {
  _id: string;
  _environmentId: string;
  _topicId: string;
  topicKey: string;
  _subscriberId: string;
  subscriberId: string;
  createdAt: string;
}

// ---- Pagination ----------------------------------------------------------------------------------

/**
 * An event of a list page given as the text its list entry is written as, kept when its jobs had all ended
 * (NotificationRepository.keepText), in place of the event itself.
 */
export interface KeptEventText {
  _id: string;
  keptText: string;
}

export interface Page<T> {
  data: T[];
  page: number;
  pageSize: number;
  hasMore: boolean;
  totalCount?: number;
}
