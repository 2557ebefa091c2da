import { isoNow } from '../../domain/clock.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { isRecordId } from '../../domain/ids.js';
import type { InboxFilter } from '../../domain/inbox.js';
import type { MarkAs, Message, SubscriberCaller } from '../../domain/types.js';
import type { Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { deleteInboxNotification } from '../inbox/inbox-notifications.js';
import { feedSubscriberOf, type FeedItem } from '../inbox/subscriber-feed.js';
import { markMessagesAs } from '../messages/mark-messages-as.js';

/**
 * The older widget's message operations (`/v1/widgets/*`, widget-client-protocol.md §3) on the caller's own in-app
 * messages, over the Inbox's storage and announcements: the same rows, the same realtime events after every commit,
 * and a message of another subscriber or environment is never found (404).
 *
 * What the widget sees: the subscriber's non-deleted in-app messages, archived ones included (the widget has no
 * archive), snoozed ones left out until they come back (the widget cannot show a snooze).
 */

const audienceOf = (caller: SubscriberCaller) => ({ environmentId: caller.environmentId, subscriberRecordId: caller.subscriberRecordId });

/** The filters every widget read shares. */
export interface WidgetQuery {
  seen?: boolean;
  read?: boolean;
  /** `feedIdentifier`: messages of these feeds only (the in-app step's `feedIdentifier`). */
  feeds?: string[];
  /** `payload`: base64 of a JSON object, matched partially against the trigger payload. */
  payload?: string;
}

function filterOf(query: WidgetQuery): InboxFilter {
  const filter: InboxFilter = { snoozed: false };
  if (query.seen !== undefined) filter.seen = query.seen;
  if (query.read !== undefined) filter.read = query.read;
  if (query.feeds !== undefined && query.feeds.length > 0) filter.feeds = query.feeds;
  if (query.payload !== undefined && query.payload !== '') filter.payload = payloadFilterOf(query.payload);
  return filter;
}

/** Novu's rule and message: the payload filter is a JSON object encoded as base64; anything else is a 400. */
function payloadFilterOf(encoded: string): Record<string, unknown> {
  const invalid = () => new ValidationError(['Invalid payload, the JSON object should be encoded to base64 string.']);
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(encoded)) throw invalid();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid();
  return value as Record<string, unknown>;
}

/**
 * The stored message as the widget's clients read it (Novu's feed item: `_jobId`, `_templateId` strings, `archived`).
 * It goes to a browser: the workflow's stored definition and the trigger's `overrides` (provider settings) stay on
 * the server, and the subscriber is the feed's short profile; the trigger `payload` is part of the widget's contract.
 */
export function toWidgetMessage(message: Message): FeedItem {
  const { template: _template, overrides: _overrides, ...shown } = message;
  return {
    ...shown,
    subscriber: message.subscriber ? feedSubscriberOf(message.subscriber) : undefined,
    _jobId: message._jobId ?? '',
    _templateId: message._templateId ?? '',
    archived: message.archived ?? false,
  };
}

export interface WidgetFeed {
  data: FeedItem[];
  totalCount: number;
  hasMore: boolean;
  pageSize: number;
  page: number;
}

/**
 * GET /v1/widgets/notifications/feed: one page by page number, newest first. Novu's `totalCount` is not a total: it
 * counts at most `limit` from the page's offset, so it is the page's length; `hasMore` says whether a next page exists.
 */
export async function listWidgetFeed(deps: Pick<Deps, 'store'>, input: { caller: SubscriberCaller; page: number; limit: number } & WidgetQuery): Promise<WidgetFeed> {
  const { caller, page, limit } = input;
  const found = await deps.store.messages.listInbox(caller.environmentId, caller.subscriberRecordId, filterOf(input), { offset: page * limit, limit });
  const data = (await withOwnSubscriber(deps.store, caller, found.data)).map(toWidgetMessage);
  return { data, totalCount: data.length, hasMore: found.hasMore, pageSize: limit, page };
}

/**
 * The count routes (`/notifications/unseen`, `/unread`, `/count`): the messages matching the query, capped at `limit`
 * as Novu caps them (the bell shows "99+").
 */
export async function countWidgetMessages(deps: Pick<Deps, 'store'>, input: { caller: SubscriberCaller; limit: number } & WidgetQuery): Promise<{ count: number }> {
  const { caller } = input;
  const [count] = await deps.store.messages.countInbox(caller.environmentId, caller.subscriberRecordId, [filterOf(input)]);
  return { count: Math.min(count, input.limit) };
}

/**
 * Marks some of the caller's messages (`markAs` with `{seen, read}`, `mark-as` with one mark), all or nothing: an id
 * that is not one of the caller's in-app messages is a 404 naming it, checked before any write. Answers the updated
 * messages.
 */
export async function markWidgetMessages(deps: Deps, input: { caller: SubscriberCaller; messageIds: string[]; marks: MarkAs[] }): Promise<FeedItem[]> {
  const ids = [...new Set(input.messageIds)];
  if (ids.length === 0) throw new ValidationError(['messageId is required']);
  // The server-side mark-as, for the caller's own subscriber: the same checks, writes and announcements.
  const marked = await markMessagesAs(deps, { caller: input.caller, subscriberId: input.caller.subscriberId, messageId: ids, markAs: input.marks });
  return marked.map(toWidgetMessage);
}

/** DELETE /v1/widgets/messages/:messageId: the Inbox's delete (soft, announced); answers the message as deleted. */
export async function removeWidgetMessage(deps: Deps, input: { caller: SubscriberCaller; messageId: string }): Promise<FeedItem> {
  const { caller } = input;
  const [message] = await findOwn(deps.store, caller, [input.messageId]);
  await deleteInboxNotification(deps, { caller, id: message._id });
  const [deleted] = await withOwnSubscriber(deps.store, caller, [{ ...message, deleted: true, updatedAt: isoNow(deps.clock) }]);
  return toWidgetMessage(deleted);
}

export interface WidgetActionInput {
  caller: SubscriberCaller;
  messageId: string;
  type: 'primary' | 'secondary';
  status?: 'pending' | 'done';
  payload?: Record<string, unknown>;
}

/**
 * POST /v1/widgets/messages/:messageId/actions/:type: records a button's outcome on the message's `cta.action`
 * (`status`, and `result: {type, payload}`), as Novu does; the message must be one of the caller's.
 */
export async function updateWidgetMessageAction(deps: Deps, input: WidgetActionInput): Promise<FeedItem> {
  const { caller } = input;
  const at = isoNow(deps.clock);
  const updated = await deps.store.transaction(async (store) => {
    const [message] = await findOwn(store, caller, [input.messageId]);
    const action = message.cta?.action ?? {};
    const result = { ...action.result, type: input.type, ...(input.payload !== undefined ? { payload: input.payload } : {}) };
    const next: Message = {
      ...message,
      updatedAt: at,
      cta: { ...message.cta, action: { ...action, ...(input.status !== undefined ? { status: input.status } : {}), result } },
    };
    if (!(await store.messages.saveInboxState(next))) throw messageNotFound(input.messageId);
    return next;
  });
  deps.realtime.messagesChanged(audienceOf(caller));
  const [withSubscriber] = await withOwnSubscriber(deps.store, caller, [updated]);
  return toWidgetMessage(withSubscriber);
}

/** GET /v1/widgets/organization: the caller's organization. Herald keeps no branding: the widget's defaults apply. */
export async function getWidgetOrganization(deps: Pick<Deps, 'store'>, caller: SubscriberCaller): Promise<{ _id: string; name: string; branding: Record<string, never> }> {
  const organization = await deps.store.dashboard.getOrganization(caller.organizationId);
  if (!organization) throw NotFoundError.entity('Organization', caller.organizationId);
  return { _id: organization._id, name: organization.name, branding: {} };
}

/**
 * POST /v1/widgets/usage/log: the widget reports clicks for Novu's product analytics. Herald collects none; it
 * answers as Novu does so the page sees no failed request, and logs the event name at debug level.
 */
export function logWidgetUsage(deps: Pick<Deps, 'logger'>, input: { caller: SubscriberCaller; name: string }): { success: true } {
  deps.logger.debug({ event: input.name.slice(0, 200), environmentId: input.caller.environmentId }, 'widget usage');
  return { success: true };
}

/** The caller's in-app messages with these ids (in that order); the first id that is not one is a 404. */
async function findOwn(store: Store, caller: SubscriberCaller, ids: string[]): Promise<Message[]> {
  const wellFormed = ids.filter(isRecordId);
  const found = wellFormed.length ? await store.messages.findInAppForSubscriber(caller.environmentId, caller.subscriberRecordId, wellFormed) : [];
  const byId = new Map(found.map((message) => [message._id, message]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing !== undefined) throw messageNotFound(missing);
  return ids.map((id) => byId.get(id)!);
}

function messageNotFound(id: string): NotFoundError {
  return NotFoundError.entity('Message', id);
}

/** Every widget message is the caller's: its subscriber record is read once. */
async function withOwnSubscriber(store: Store, caller: SubscriberCaller, messages: Message[]): Promise<Message[]> {
  if (messages.length === 0) return messages;
  const subscriber = await store.subscribers.get(caller.environmentId, caller.subscriberRecordId);
  if (subscriber) for (const message of messages) message.subscriber = subscriber;
  return messages;
}
