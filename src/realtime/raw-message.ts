import type { Message, Subscriber } from '../domain/types.js';

/**
 * The `message` of a `notification_received` event: the database-style message Novu's clients map themselves
 * (inbox-client-protocol.md §5.4), not the HTTP InboxNotification. An allow-list, because it travels to a browser:
 * the subscriber's channel credentials (webhook URLs, device tokens), the workflow's steps and the trigger's
 * overrides stay on the server. `cta` is always an object (the client dereferences `cta.action` without a check) and
 * `content` always a string (it becomes `body`).
 */
export interface RealtimeMessage {
  _id: string;
  _environmentId: string;
  _organizationId: string;
  _notificationId: string;
  _subscriberId: string;
  _templateId: string | null;
  transactionId: string;
  templateIdentifier?: string;
  /** The older widget's feed (the in-app step's `feedIdentifier`). */
  _feedId?: string;
  channel: string;
  content: string;
  subject?: string;
  avatar?: string;
  cta: Message['cta'];
  read: boolean;
  seen: boolean;
  archived: boolean;
  snoozedUntil?: string;
  deliveredAt?: string[];
  createdAt: string;
  updatedAt?: string;
  lastReadDate?: string;
  lastSeenDate?: string;
  firstSeenDate?: string;
  archivedAt?: string;
  tags: string[];
  data?: Record<string, unknown>;
  severity: string;
  workflow?: { id: string; identifier: string; name: string; critical: boolean; tags: string[]; severity: string };
  subscriber?: Pick<Subscriber, '_id' | 'subscriberId' | 'firstName' | 'lastName' | 'avatar' | 'locale' | 'data' | 'timezone' | 'email' | 'phone'>;
  status: string;
}

/** Inbox fields a message may carry beyond the base shape (state the inbox routes add). */
type InboxFields = Partial<{
  avatar: string;
  archived: boolean;
  archivedAt: string;
  firstSeenDate: string;
  tags: string[];
  data: Record<string, unknown>;
  severity: string;
}>;

export function toRealtimeMessage(message: Message): RealtimeMessage {
  const extra = message as Message & InboxFields;
  const severity = typeof extra.severity === 'string' ? extra.severity : 'none';
  const tags = Array.isArray(extra.tags) ? extra.tags : (message.template?.tags ?? []);
  const template = message.template;
  const identifier = template?.triggers?.[0]?.identifier ?? message.templateIdentifier;
  return dropUndefined({
    _id: message._id,
    _environmentId: message._environmentId,
    _organizationId: message._organizationId,
    _notificationId: message._notificationId,
    _subscriberId: message._subscriberId,
    _templateId: message._templateId ?? null,
    transactionId: message.transactionId,
    templateIdentifier: message.templateIdentifier ?? identifier,
    _feedId: typeof message._feedId === 'string' ? message._feedId : undefined,
    channel: message.channel,
    content: typeof message.content === 'string' ? message.content : '',
    subject: message.subject,
    avatar: extra.avatar,
    cta: message.cta && typeof message.cta === 'object' ? message.cta : {},
    read: message.read,
    seen: message.seen,
    archived: extra.archived ?? false,
    snoozedUntil: message.snoozedUntil,
    deliveredAt: message.deliveredAt,
    createdAt: message.createdAt,
    updatedAt: message.updatedAt,
    lastReadDate: message.lastReadDate,
    lastSeenDate: message.lastSeenDate,
    firstSeenDate: extra.firstSeenDate,
    archivedAt: extra.archivedAt,
    tags,
    data: extra.data,
    severity,
    workflow:
      template && identifier
        ? { id: template._id ?? message._templateId ?? '', identifier, name: template.name, critical: template.critical ?? false, tags: template.tags ?? [], severity }
        : undefined,
    subscriber: message.subscriber && dropUndefined({
      _id: message.subscriber._id,
      subscriberId: message.subscriber.subscriberId,
      firstName: message.subscriber.firstName,
      lastName: message.subscriber.lastName,
      avatar: message.subscriber.avatar,
      locale: message.subscriber.locale,
      data: message.subscriber.data,
      timezone: message.subscriber.timezone,
      email: message.subscriber.email,
      phone: message.subscriber.phone,
    }),
    status: message.status,
  });
}

/** JSON leaves undefined out anyway; dropping it here keeps the payload the same over msgpack (the Redis emitter). */
function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}
