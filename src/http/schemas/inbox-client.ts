import { Type, type Static } from '@sinclair/typebox';
import { ValidationError } from '../../domain/errors.js';
import { parseTagsFilter, type InboxFilter } from '../../domain/inbox.js';
import { SEVERITIES, type Message, type MessageButton, type Severity } from '../../domain/types.js';
import { FreeObject } from './common.js';
import { StringEnum } from './message.js';

/**
 * The `/v1/inbox/*` shapes as @novu/js 3.19.2 sends and reads them (spec/inbox-client-protocol.md §2-§4). The
 * Inbox query and filter encodings (tags forms, `data` as JSON text, `severity[]`) are decoded here, at the edge.
 */

const NullableIso = Type.Union([Type.String(), Type.Null()]);

export const SessionBody = Type.Object({
  applicationIdentifier: Type.String({ description: "the environment's public identifier (GET /v1/environments/me)" }),
  subscriber: Type.Object(
    {
      subscriberId: Type.String(),
      firstName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      lastName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      email: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      phone: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      avatar: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      locale: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      timezone: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      data: Type.Optional(Type.Union([FreeObject, Type.Null()])),
    },
    { additionalProperties: true },
  ),
  subscriberHash: Type.Optional(Type.String({ description: 'hex HMAC-SHA256 of subscriberId keyed with the secret key; required when HMAC is on' })),
  contextHash: Type.Optional(Type.String()),
  context: Type.Optional(Type.Unknown()),
  defaultSchedule: Type.Optional(Type.Unknown()),
});
export type SessionBody = Static<typeof SessionBody>;

const SeverityCounts = Type.Object({ high: Type.Integer(), medium: Type.Integer(), low: Type.Integer(), none: Type.Integer() });

export const SessionResponse = Type.Object({
  token: Type.String({ description: 'subscriber session token: Authorization: Bearer <token> on the other /v1/inbox routes' }),
  unreadCount: Type.Object({ total: Type.Integer(), severity: SeverityCounts }),
  removeNovuBranding: Type.Boolean(),
  isDevelopmentMode: Type.Boolean(),
  maxSnoozeDurationHours: Type.Integer(),
  applicationIdentifier: Type.String(),
});

const Redirect = Type.Object({ url: Type.String(), target: Type.Optional(Type.String()) });
/** The workflow a notification came from, and the one a workflow preference is for. */
const InboxWorkflow = Type.Object({
  id: Type.String(),
  identifier: Type.String(),
  name: Type.String(),
  critical: Type.Boolean(),
  tags: Type.Array(Type.String()),
  severity: StringEnum(SEVERITIES),
});
const Action = Type.Object({ label: Type.String(), isCompleted: Type.Boolean(), redirect: Type.Optional(Redirect) });

export const InboxNotificationSchema = Type.Object({
  id: Type.String(),
  transactionId: Type.String(),
  subject: Type.Optional(Type.String()),
  body: Type.String(),
  to: Type.Object(
    {
      id: Type.Optional(Type.String()),
      subscriberId: Type.String(),
      firstName: Type.Optional(Type.String()),
      lastName: Type.Optional(Type.String()),
      email: Type.Optional(Type.String()),
      phone: Type.Optional(Type.String()),
      avatar: Type.Optional(Type.String()),
      locale: Type.Optional(Type.String()),
      timezone: Type.Optional(Type.String()),
      data: Type.Optional(FreeObject),
    },
  ),
  isRead: Type.Boolean(),
  isSeen: Type.Boolean(),
  isArchived: Type.Boolean(),
  isSnoozed: Type.Boolean(),
  snoozedUntil: NullableIso,
  deliveredAt: Type.Array(Type.String()),
  createdAt: Type.String(),
  readAt: NullableIso,
  firstSeenAt: NullableIso,
  archivedAt: NullableIso,
  avatar: Type.Optional(Type.String()),
  primaryAction: Type.Optional(Action),
  secondaryAction: Type.Optional(Action),
  channelType: Type.Literal('in_app'),
  tags: Type.Array(Type.String()),
  data: Type.Optional(FreeObject),
  redirect: Type.Optional(Redirect),
  workflow: Type.Optional(InboxWorkflow),
  severity: StringEnum(SEVERITIES),
});
export type InboxNotification = Static<typeof InboxNotificationSchema>;

function action(message: Message, button: MessageButton | undefined): InboxNotification['primaryAction'] {
  if (!button) return undefined;
  const result = message.cta.action?.result;
  return {
    label: button.content,
    isCompleted: message.cta.action?.status === 'done' && result?.type === button.type,
    ...(button.url ? { redirect: { url: button.url, ...(button.target ? { target: button.target } : {}) } } : {}),
  };
}

const textOrUndefined = (value: string | null | undefined) => (typeof value === 'string' ? value : undefined);

/** A stored in-app message as the Inbox clients read it (§4). */
export function toInboxNotification(message: Message): InboxNotification {
  const buttons = message.cta?.action?.buttons ?? [];
  const subscriber = message.subscriber;
  const severity: Severity = message.severity ?? 'none';
  const template = message.template;
  const notification: InboxNotification = {
    id: message._id,
    transactionId: message.transactionId,
    body: typeof message.content === 'string' ? message.content : (message.content ?? []).map((block) => block.content).join('\n'),
    to: {
      id: message._subscriberId,
      subscriberId: subscriber?.subscriberId ?? '',
      firstName: textOrUndefined(subscriber?.firstName),
      lastName: textOrUndefined(subscriber?.lastName),
      email: textOrUndefined(subscriber?.email),
      phone: textOrUndefined(subscriber?.phone),
      avatar: textOrUndefined(subscriber?.avatar),
      locale: textOrUndefined(subscriber?.locale),
      timezone: textOrUndefined(subscriber?.timezone),
      data: subscriber?.data ?? undefined,
    },
    isRead: message.read,
    isSeen: message.seen,
    isArchived: message.archived ?? false,
    isSnoozed: message.snoozedUntil !== undefined,
    snoozedUntil: message.snoozedUntil ?? null,
    deliveredAt: message.deliveredAt ?? [],
    createdAt: message.createdAt,
    readAt: message.read ? (message.lastReadDate ?? null) : null,
    firstSeenAt: message.firstSeenDate ?? (message.seen ? (message.lastSeenDate ?? null) : null),
    archivedAt: message.archived ? (message.archivedAt ?? null) : null,
    channelType: 'in_app',
    tags: message.tags ?? [],
    severity,
  };
  if (message.subject !== undefined) notification.subject = message.subject;
  if (message.avatar) notification.avatar = message.avatar;
  if (message.data) notification.data = message.data;
  const primary = action(message, buttons.find((button) => button.type === 'primary'));
  if (primary) notification.primaryAction = primary;
  const secondary = action(message, buttons.find((button) => button.type === 'secondary'));
  if (secondary) notification.secondaryAction = secondary;
  const url = message.cta?.data?.url;
  if (url) notification.redirect = { url, ...(message.cta.data?.target ? { target: message.cta.data.target } : {}) };
  if (template) {
    notification.workflow = {
      id: message._templateId ?? template._id ?? '',
      identifier: message.templateIdentifier ?? '',
      name: template.name,
      critical: template.critical ?? false,
      tags: template.tags ?? [],
      severity,
    };
  }
  return notification;
}

const QueryBoolean = Type.Boolean();

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
    after: Type.Optional(Type.String()),
    read: Type.Optional(QueryBoolean),
    seen: Type.Optional(QueryBoolean),
    archived: Type.Optional(QueryBoolean),
    snoozed: Type.Optional(QueryBoolean),
    tags: Type.Optional(Type.Array(Type.String(), { description: 'tags[]=a&tags[]=b: any of them (OR)' })),
    data: Type.Optional(Type.String({ description: 'a JSON object: each key must equal the notification data' })),
    severity: Type.Optional(Type.Array(StringEnum(SEVERITIES), { description: 'severity=high or severity[]=high&severity[]=low' })),
    createdGte: Type.Optional(Type.Number({ description: 'epoch milliseconds' })),
    createdLte: Type.Optional(Type.Number({ description: 'epoch milliseconds' })),
  },
  // The AND form `tags[0][]=a&tags[1][]=b` arrives (http/query-string.ts) as keys `tags[0]`, `tags[1]`: read raw.
  { additionalProperties: true },
);
export type ListQuery = Static<typeof ListQuery>;

/** The list query as a filter; `echo` is what the reply's `filter` shows. */
export function listFilterOf(query: ListQuery & Record<string, unknown>): { filter: InboxFilter; echo: Record<string, unknown> } {
  const andGroups = Object.keys(query)
    .map((key) => /^tags\[(\d+)\]$/.exec(key))
    .filter((match): match is RegExpExecArray => match !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((match) => {
      const value = query[match[0]];
      return Array.isArray(value) ? value.map(String) : [String(value)];
    });
  const tags = andGroups.length ? parseTagsFilter(andGroups) : parseTagsFilter(query.tags);
  const severity = query.severity;
  const filter: InboxFilter = {
    read: query.read,
    seen: query.seen,
    archived: query.archived,
    snoozed: query.snoozed,
    tags,
    severity,
    data: query.data === undefined ? undefined : parseDataFilter(JSON.parse(jsonText(query.data, 'data')), 'data'),
    createdGte: epochToIso(query.createdGte, 'createdGte'),
    createdLte: epochToIso(query.createdLte, 'createdLte'),
  };
  const echo: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filter)) if (value !== undefined) echo[key] = value;
  return { filter, echo };
}

function jsonText(text: string, field: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    throw new ValidationError([`${field} must be JSON`]);
  }
}

function parseDataFilter(value: unknown, field: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw new ValidationError([`${field} must be a JSON object`]);
  return Object.keys(value).length ? (value as Record<string, unknown>) : undefined;
}

function epochToIso(value: number | undefined, field: string): string | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new ValidationError([`${field} must be epoch milliseconds`]);
  return date.toISOString();
}

export const ListResponse = Type.Object({ data: Type.Array(InboxNotificationSchema), hasMore: Type.Boolean(), filter: FreeObject });

export const CountQuery = Type.Object({
  filters: Type.Optional(Type.String({ description: 'a JSON array of filter objects {tags, read, archived, snoozed, seen, data, severity, createdGte, createdLte}' })),
  filter: Type.Optional(Type.String({ description: 'one filter object as JSON (older clients)' })),
});

export const CountResponse = Type.Object({ data: Type.Array(Type.Object({ count: Type.Integer(), filter: FreeObject })) });

const FILTER_KEYS = new Set(['tags', 'read', 'archived', 'snoozed', 'seen', 'data', 'severity', 'createdGte', 'createdLte']);

/** The count route's `filters` JSON: each object becomes a filter; the objects themselves are echoed unchanged. */
export function countFiltersOf(query: Static<typeof CountQuery>): Array<{ filter: InboxFilter; echo: Record<string, unknown> }> {
  const text = query.filters ?? (query.filter === undefined ? '[{}]' : `[${query.filter}]`);
  const parsed: unknown = JSON.parse(jsonText(text, 'filters'));
  if (!Array.isArray(parsed)) throw new ValidationError(['filters must be a JSON array of filter objects']);
  if (parsed.length > 30) throw new ValidationError(['filters must hold at most 30 filters']);
  return parsed.map((raw, index) => {
    const field = `filters[${index}]`;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ValidationError([`${field} must be an object`]);
    const object = raw as Record<string, unknown>;
    const unknownKey = Object.keys(object).find((key) => !FILTER_KEYS.has(key));
    if (unknownKey) throw new ValidationError([`${field}.${unknownKey} is not a filter field`]);
    for (const key of ['read', 'archived', 'snoozed', 'seen'] as const) {
      if (object[key] !== undefined && typeof object[key] !== 'boolean') throw new ValidationError([`${field}.${key} must be a boolean`]);
    }
    const filter: InboxFilter = {
      read: object.read as boolean | undefined,
      seen: object.seen as boolean | undefined,
      archived: object.archived as boolean | undefined,
      snoozed: object.snoozed as boolean | undefined,
      tags: parseTagsFilter(object.tags, `${field}.tags`),
      severity: severityList(object.severity, `${field}.severity`),
      data: parseDataFilter(object.data, `${field}.data`),
      createdGte: epochToIso(numberOrUndefined(object.createdGte, `${field}.createdGte`), `${field}.createdGte`),
      createdLte: epochToIso(numberOrUndefined(object.createdLte, `${field}.createdLte`), `${field}.createdLte`),
    };
    return { filter, echo: object };
  });
}

function numberOrUndefined(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number') throw new ValidationError([`${field} must be epoch milliseconds`]);
  return value;
}

function severityList(value: unknown, field: string): Severity[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((item) => (SEVERITIES as readonly unknown[]).includes(item))) throw new ValidationError([`${field} must be one of ${SEVERITIES.join(', ')}`]);
  return list as Severity[];
}

export const NotificationParams = Type.Object({ id: Type.String() });

export const SnoozeBody = Type.Object({ snoozeUntil: Type.String({ description: 'ISO 8601 date-time' }) });
export const ActionBody = Type.Object({ actionType: StringEnum(['primary', 'secondary'] as const) });

/** The bulk POSTs: `data` arrives as JSON text inside the JSON body (the client encodes it twice). */
export const BulkBody = Type.Object({
  notificationIds: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
  tags: Type.Optional(Type.Unknown()),
  data: Type.Optional(Type.Union([Type.String(), FreeObject])),
  contextKeys: Type.Optional(Type.Unknown()),
});
export type BulkBody = Static<typeof BulkBody>;

export function bulkFilterOf(body: BulkBody | undefined): { tags: InboxFilter['tags']; data: InboxFilter['data'] } {
  const data = body?.data;
  return {
    tags: parseTagsFilter(body?.tags),
    data: data === undefined ? undefined : parseDataFilter(typeof data === 'string' ? JSON.parse(jsonText(data, 'data')) : data, 'data'),
  };
}

// ---- preferences (§6) ----------------------------------------------------------------------------

const channelFlags = {
  in_app: Type.Optional(Type.Boolean()),
  email: Type.Optional(Type.Boolean()),
  sms: Type.Optional(Type.Boolean()),
  chat: Type.Optional(Type.Boolean()),
  push: Type.Optional(Type.Boolean()),
};
const Channels = Type.Object(channelFlags);
const INBOX_CHANNELS = ['in_app', 'email', 'sms', 'chat', 'push'] as const;

export const PreferencesQuery = Type.Object({
  criticality: Type.Optional(StringEnum(['critical', 'nonCritical', 'all'] as const)),
  tags: Type.Optional(Type.Array(Type.String())),
  severity: Type.Optional(Type.Array(StringEnum(SEVERITIES))),
});

export const InboxPreferenceSchema = Type.Object({
  level: StringEnum(['global', 'template'] as const),
  enabled: Type.Boolean(),
  channels: Channels,
  schedule: Type.Optional(FreeObject),
  workflow: Type.Optional(InboxWorkflow),
  overrides: Type.Optional(Type.Array(Type.Object({ channel: Type.String(), source: Type.String() }))),
  updatedAt: Type.Optional(Type.String()),
});
export type InboxPreference = Static<typeof InboxPreferenceSchema>;

/** A PATCH body: channel switches (`tool` is accepted and ignored), and for the global level a `schedule`. */
export const PreferenceChannelsBody = Type.Object({ ...channelFlags, tool: Type.Optional(Type.Boolean()), schedule: Type.Optional(Type.Union([FreeObject, Type.Null()])) });
export const BulkPreferencesBody = Type.Object({
  preferences: Type.Array(Type.Object({ workflowId: Type.String({ minLength: 1 }), ...channelFlags, tool: Type.Optional(Type.Boolean()) }), { minItems: 1, maxItems: 100 }),
});
export const PreferenceParams = Type.Object({ workflowIdOrIdentifier: Type.String() });

export function channelSwitchesOf(body: Record<string, unknown>): Record<string, boolean> {
  const switches: Record<string, boolean> = {};
  for (const channel of INBOX_CHANNELS) if (typeof body[channel] === 'boolean') switches[channel] = body[channel] as boolean;
  return switches;
}

export function toGlobalPreference(view: { enabled: boolean; channels: Record<string, boolean>; schedule?: unknown; updatedAt?: string }): InboxPreference {
  return {
    level: 'global',
    enabled: view.enabled,
    channels: Object.fromEntries(INBOX_CHANNELS.map((channel) => [channel, view.channels[channel] ?? true])),
    ...(view.schedule ? { schedule: view.schedule as Record<string, unknown> } : {}),
    ...(view.updatedAt ? { updatedAt: view.updatedAt } : {}),
  };
}

export function toWorkflowPreference(view: {
  workflow: { _id: string; workflowId: string; name: string; critical: boolean; readOnly?: boolean; tags: string[]; severity: Severity };
  enabled: boolean;
  channels: Record<string, boolean | undefined>;
  overrides: Array<{ channel: string; source: string }>;
  updatedAt?: string;
}): InboxPreference {
  const { workflow } = view;
  return {
    level: 'template',
    enabled: view.enabled,
    channels: Object.fromEntries(Object.entries(view.channels).filter(([, value]) => value !== undefined)) as Record<string, boolean>,
    workflow: {
      id: workflow._id,
      identifier: workflow.workflowId,
      name: workflow.name,
      critical: workflow.critical || workflow.readOnly === true,
      tags: workflow.tags,
      severity: workflow.severity,
    },
    overrides: view.overrides,
    ...(view.updatedAt ? { updatedAt: view.updatedAt } : {}),
  };
}
