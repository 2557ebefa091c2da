import { isoNow } from '../../domain/clock.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
import { applyInboxAction, validateSnoozeUntil, type InboxAction, type InboxFilter } from '../../domain/inbox.js';
import { isRecordId } from '../../domain/ids.js';
import { normalizeContextKeys } from '../../domain/context-keys.js';
import type { Message, SubscriberCaller } from '../../domain/types.js';
import { dedupeKeys, JOB_NAMES, type EndSnoozePayload } from '../../queue/jobs.js';
import type { InboxCursor, Store } from '../../store/ports.js';
import type { Deps } from '../deps.js';
import { withDomainEvents } from '../events/record-domain-events.js';
import { messageActionEventType, messageEvent } from '../../domain/webhooks.js';

/**
 * The Inbox routes' operations on the caller's own in-app messages. A message of another subscriber or environment
 * is never found (404); every change is announced with `deps.realtime.messagesChanged` once it is committed.
 */

const audienceOf = (caller: SubscriberCaller) => ({ environmentId: caller.environmentId, subscriberRecordId: caller.subscriberRecordId });

export interface ListInboxInput {
  caller: SubscriberCaller;
  filter: InboxFilter;
  /** Id of the last notification the client holds: the page starts after it (newest first). */
  after?: string;
  offset: number;
  limit: number;
}

export async function listInboxNotifications(deps: Pick<Deps, 'store'>, input: ListInboxInput): Promise<{ data: Message[]; hasMore: boolean }> {
  const { caller } = input;
  let after: InboxCursor | undefined;
  if (input.after !== undefined) {
    after = isRecordId(input.after) ? await deps.store.messages.findInboxPosition(caller.environmentId, caller.subscriberRecordId, input.after) : undefined;
    if (!after) throw new ValidationError([`after must be the id of one of the subscriber's notifications, got ${input.after}`]);
  }
  const page = await deps.store.messages.listInbox(caller.environmentId, caller.subscriberRecordId, input.filter, {
    after,
    offset: input.offset,
    limit: input.limit,
  });
  return { data: await withOwnSubscriber(deps.store, caller, page.data), hasMore: page.hasMore };
}

export async function countInboxNotifications(deps: Pick<Deps, 'store'>, input: { caller: SubscriberCaller; filters: InboxFilter[] }): Promise<number[]> {
  return deps.store.messages.countInbox(input.caller.environmentId, input.caller.subscriberRecordId, input.filters);
}

/** Snooze inputs arrive as the client's ISO string; everything else is already an InboxAction. */
export type InboxActionInput = Exclude<InboxAction, { type: 'snooze' }> | { type: 'snooze'; until: string };

/** One notification's action (read, unread, seen, archive, unarchive, snooze, unsnooze, complete, revert). */
export async function updateInboxNotification(deps: Deps, input: { caller: SubscriberCaller; id: string; action: InboxActionInput; contextKeys?: string[] }): Promise<Message> {
  const { caller } = input;
  const now = deps.clock.now();
  const action: InboxAction =
    input.action.type === 'snooze'
      ? { type: 'snooze', until: validateSnoozeUntil(input.action.until, now, deps.config.inbox.maxSnoozeDurationHours) }
      : input.action;
  const updated = await deps.store.transaction(async (store) => {
    const message = await findOwn(store, caller, input.id, input.contextKeys);
    const next = applyInboxAction(message, action, new Date(now).toISOString());
    if (!(await store.messages.saveInboxState(next))) throw notificationNotFound(input.id);
    const type = messageActionEventType(action.type);
    if (type) await store.events.record(caller.environmentId, [messageEvent(type, next, { previous: message, subscriberId: caller.subscriberId })]);
    return next;
  });
  if (action.type === 'snooze') await scheduleSnoozeEnd(deps, updated);
  deps.realtime.messagesChanged(audienceOf(caller));
  return (await withOwnSubscriber(deps.store, caller, [updated]))[0];
}

export type BulkInboxAction = 'seen' | 'read' | 'archive' | 'read-archive' | 'delete';

export interface BulkInboxInput {
  caller: SubscriberCaller;
  action: BulkInboxAction;
  /** `seen` only: these notifications (ids that are not the caller's are ignored); otherwise every match of the filter. */
  ids?: string[];
  tags?: InboxFilter['tags'];
  data?: Record<string, unknown>;
  /** Only messages of these feeds (the legacy widget's `feedId`). */
  feeds?: string[];
  /** Only messages whose context keys are exactly these (the server-side v2 routes). */
  contextKeys?: string[];
}

/** The bulk POSTs: applies the action to every matching notification of the caller; returns how many changed. */
export async function updateInboxNotifications(deps: Deps, input: BulkInboxInput): Promise<number> {
  const { caller } = input;
  const at = isoNow(deps.clock);
  let changed = 0;
  if (input.ids !== undefined) {
    const ids = input.ids.filter(isRecordId);
    const messages = ids.length ? await deps.store.messages.findInAppForSubscriber(caller.environmentId, caller.subscriberRecordId, ids) : [];
    for (const message of messages) if (inContext(message, input.contextKeys) && (await applyBulk(deps.store, caller, input.action, message, at))) changed++;
  } else {
    const base = { tags: input.tags, data: input.data, feeds: input.feeds, contextKeys: input.contextKeys };
    const filter: InboxFilter = {
      seen: { ...base, seen: false },
      read: { ...base, read: false },
      archive: { ...base, archived: false },
      'read-archive': { ...base, read: true, archived: false },
      delete: base,
    }[input.action];
    // Every action takes the message out of its filter, but a cursor (not offset 0) also survives a concurrent change.
    let after: InboxCursor | undefined;
    for (;;) {
      const page = await deps.store.messages.listInbox(caller.environmentId, caller.subscriberRecordId, filter, { after, offset: 0, limit: 200 });
      for (const message of page.data) if (await applyBulk(deps.store, caller, input.action, message, at)) changed++;
      if (!page.hasMore || page.data.length === 0) break;
      const last = page.data[page.data.length - 1];
      after = { createdAt: last.createdAt, id: last._id };
    }
  }
  if (changed > 0) deps.realtime.messagesChanged(audienceOf(caller));
  return changed;
}

async function applyBulk(store: Store, caller: SubscriberCaller, action: BulkInboxAction, message: Message, at: string): Promise<boolean> {
  const type = messageActionEventType(action);
  return withDomainEvents(store, message._environmentId, async (tx, events) => {
    let next: Message;
    if (action === 'delete') {
      if (!(await tx.messages.softDelete(message._environmentId, message._id, at))) return false;
      next = { ...message, deleted: true, updatedAt: at };
    } else {
      next = applyInboxAction(message, { type: action === 'read-archive' ? 'archive' : action }, at);
      if (!(await tx.messages.saveInboxState(next))) return false;
    }
    if (type) events.push(messageEvent(type, next, { previous: message, subscriberId: caller.subscriberId }));
    return true;
  });
}

/** DELETE /v1/inbox/notifications/:id/delete: a soft delete, as the server-side delete-message. */
export async function deleteInboxNotification(deps: Deps, input: { caller: SubscriberCaller; id: string; contextKeys?: string[] }): Promise<void> {
  const message = await findOwn(deps.store, input.caller, input.id, input.contextKeys);
  const at = isoNow(deps.clock);
  const deleted = await withDomainEvents(deps.store, input.caller.environmentId, async (tx, events) => {
    if (!(await tx.messages.softDelete(input.caller.environmentId, message._id, at))) return false;
    events.push(messageEvent('message.deleted', { ...message, deleted: true, updatedAt: at }, { previous: message, subscriberId: input.caller.subscriberId }));
    return true;
  });
  if (!deleted) throw notificationNotFound(input.id);
  deps.realtime.messagesChanged(audienceOf(input.caller));
}

/**
 * The queue job at the end of a snooze: the message returns to the feed with a new `deliveredAt` entry and the
 * subscriber's sockets hear `notification_received`. A message snoozed again, un-snoozed or deleted meanwhile is left
 * alone; a job that runs before its time (a queue on another clock) is put back for the rest.
 */
export async function endSnooze(deps: Deps, payload: EndSnoozePayload): Promise<void> {
  const message = await deps.store.messages.get(payload.environmentId, payload.messageId);
  if (!message || message.snoozedUntil !== payload.snoozedUntil) return;
  const remaining = Date.parse(payload.snoozedUntil) - deps.clock.now();
  if (remaining > 0) {
    await deps.queue.enqueue(JOB_NAMES.endSnooze, payload, { delayMs: remaining, dedupeKey: `${dedupeKeys.endSnooze(payload.messageId, payload.snoozedUntil)}:${deps.clock.now()}` });
    return;
  }
  const next = applyInboxAction(message, { type: 'unsnooze' }, isoNow(deps.clock));
  const [withSubscriber] = await deps.store.subscribers.getMany(message._environmentId, [message._subscriberId]);
  if (withSubscriber) next.subscriber = withSubscriber;
  const saved = await withDomainEvents(deps.store, message._environmentId, async (tx, events) => {
    if (!(await tx.messages.saveInboxState(next))) return false;
    events.push(messageEvent('message.unsnoozed', next, { previous: message }));
    return true;
  });
  if (!saved) return;
  deps.realtime.messageDelivered({ environmentId: message._environmentId, subscriberRecordId: message._subscriberId }, next);
}

async function scheduleSnoozeEnd(deps: Deps, message: Message): Promise<void> {
  const snoozedUntil = message.snoozedUntil as string;
  const payload: EndSnoozePayload = { environmentId: message._environmentId, messageId: message._id, snoozedUntil };
  await deps.queue.enqueue(JOB_NAMES.endSnooze, payload, {
    delayMs: Math.max(0, Date.parse(snoozedUntil) - deps.clock.now()),
    dedupeKey: dedupeKeys.endSnooze(message._id, snoozedUntil),
  });
}

/** The caller's in-app message `id`; with `contextKeys`, only if its context keys are exactly those (else 404). */
async function findOwn(store: Store, caller: SubscriberCaller, id: string, contextKeys?: string[]): Promise<Message> {
  const [message] = isRecordId(id) ? await store.messages.findInAppForSubscriber(caller.environmentId, caller.subscriberRecordId, [id]) : [];
  if (!message || !inContext(message, contextKeys)) throw notificationNotFound(id);
  return message;
}

function inContext(message: Message, contextKeys: string[] | undefined): boolean {
  return contextKeys === undefined || normalizeContextKeys(message.contextKeys) === normalizeContextKeys(contextKeys);
}

function notificationNotFound(id: string): NotFoundError {
  return NotFoundError.entity('Notification', id);
}

/** Every Inbox message is the caller's: its subscriber record is read once for the page. */
async function withOwnSubscriber(store: Store, caller: SubscriberCaller, messages: Message[]): Promise<Message[]> {
  if (messages.length === 0) return messages;
  const subscriber = await store.subscribers.get(caller.environmentId, caller.subscriberRecordId);
  if (subscriber) for (const message of messages) message.subscriber = subscriber;
  return messages;
}
