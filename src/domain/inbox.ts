import { ValidationError } from './errors.js';
import type { Message, Severity } from './types.js';

/**
 * The Inbox's rules on an in-app message's state (read, seen, archived, snoozed, actions) and on its filters,
 * as the @novu/js 3.19 clients use them (spec/inbox-client-protocol.md). Pure: storage and time come from outside.
 */
export type InboxAction =
  | { type: 'read' }
  | { type: 'unread' }
  | { type: 'seen' }
  | { type: 'archive' }
  | { type: 'unarchive' }
  | { type: 'snooze'; until: string }
  | { type: 'unsnooze' }
  | { type: 'complete'; actionType: 'primary' | 'secondary'; payload?: Record<string, unknown> }
  | { type: 'revert'; actionType: 'primary' | 'secondary'; payload?: Record<string, unknown> };

/**
 * The message after the action at `at`. Reading implies seeing; archiving implies reading (Novu's archive);
 * `firstSeenDate` is set once; un-snoozing (by hand or when the time passes) appends a `deliveredAt` entry, as
 * the message is delivered again.
 */
export function applyInboxAction(message: Message, action: InboxAction, at: string): Message {
  const next: Message = { ...message, updatedAt: at };
  const see = () => {
    next.seen = true;
    next.lastSeenDate = at;
    next.firstSeenDate ??= at;
  };
  switch (action.type) {
    case 'read':
      next.read = true;
      next.lastReadDate = at;
      see();
      break;
    case 'unread':
      next.read = false;
      break;
    case 'seen':
      see();
      break;
    case 'archive':
      if (!next.archived) next.archivedAt = at;
      next.archived = true;
      if (!next.read) next.lastReadDate = at;
      next.read = true;
      see();
      break;
    case 'unarchive':
      next.archived = false;
      delete next.archivedAt;
      break;
    case 'snooze':
      next.snoozedUntil = action.until;
      break;
    case 'unsnooze':
      if (next.snoozedUntil === undefined) break;
      delete next.snoozedUntil;
      next.deliveredAt = [...(next.deliveredAt ?? []), at];
      break;
    case 'complete':
    case 'revert': {
      const buttons = next.cta?.action?.buttons ?? [];
      if (!buttons.some((button) => button.type === action.actionType)) {
        throw new ValidationError([`actionType ${action.actionType}: the notification has no ${action.actionType} action`]);
      }
      next.cta = {
        ...next.cta,
        action: {
          ...next.cta.action,
          status: action.type === 'complete' ? 'done' : 'pending',
          // The legacy action route (`@novu/node` markMessageActionSeen) may store the click's payload with it.
          result: { ...next.cta.action?.result, type: action.actionType, ...(action.payload !== undefined ? { payload: action.payload } : {}) },
        },
      };
      break;
    }
  }
  return next;
}

/**
 * A snooze must end in the future and no later than `maxHours` from now (the session's `maxSnoozeDurationHours`).
 * Returns the normalised ISO instant.
 */
export function validateSnoozeUntil(value: string, nowMs: number, maxHours: number): string {
  const until = Date.parse(value);
  if (typeof value !== 'string' || Number.isNaN(until)) throw new ValidationError(['snoozeUntil must be an ISO 8601 date-time']);
  if (until <= nowMs) throw new ValidationError(['snoozeUntil must be in the future']);
  if (maxHours <= 0) throw new ValidationError(['snoozing is disabled (maxSnoozeDurationHours is 0)']);
  if (until > nowMs + maxHours * 3600_000) throw new ValidationError([`snoozeUntil must be at most ${maxHours} hours from now`]);
  return new Date(until).toISOString();
}

/** Tags filter as AND of OR-groups: `[['a','b'],['c']]` = (a or b) and c. An empty list matches everything. */
export type TagGroups = string[][];

export interface InboxFilter {
  read?: boolean;
  seen?: boolean;
  archived?: boolean;
  snoozed?: boolean;
  tags?: TagGroups;
  severity?: Severity[];
  /** Each key must equal the message's `data[key]` (deep equality of JSON values). */
  data?: Record<string, unknown>;
  /** Inclusive bounds on `createdAt`, ISO instants. */
  createdGte?: string;
  createdLte?: string;
  /** The server-side v2 routes' `contextKeys`: the message's context keys are exactly this set (order-insensitive). */
  contextKeys?: string[];
  /** The legacy widget's `feedIdentifier`: messages of any of these feeds (the in-app step's `feedIdentifier`). */
  feeds?: string[];
  /** The legacy widget's `payload`: a partial match on the trigger payload (see matchesPayloadFilter). */
  payload?: Record<string, unknown>;
}

/** Whether a filter has conditions checked on the stored documents rather than in SQL (data, feeds, payload). */
export function hasDocumentConditions(filter: InboxFilter): boolean {
  return filter.data !== undefined || filter.feeds !== undefined || filter.payload !== undefined;
}

/** The document conditions of a filter (data, feeds, payload) for one message. */
export function matchesDocumentConditions(message: { data?: Record<string, unknown>; _feedId?: string | null; payload?: Record<string, unknown> }, filter: InboxFilter): boolean {
  if (filter.data !== undefined && !matchesDataFilter(message.data, filter.data)) return false;
  if (filter.feeds !== undefined && !(typeof message._feedId === 'string' && filter.feeds.includes(message._feedId))) return false;
  if (filter.payload !== undefined && !matchesPayloadFilter(message.payload, filter.payload)) return false;
  return true;
}

/**
 * Novu's feed `payload` filter: the object is flattened to its leaf paths (`{a: {b: 1}}` is `a.b = 1`) and each leaf
 * must equal the payload's value there; other payload keys do not matter. An empty object matches everything.
 */
export function matchesPayloadFilter(payload: Record<string, unknown> | undefined, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([key, expected]) => {
    const actual = payload?.[key];
    if (expected !== null && typeof expected === 'object' && !Array.isArray(expected) && Object.keys(expected).length > 0) {
      return actual !== null && typeof actual === 'object' && !Array.isArray(actual) && matchesPayloadFilter(actual as Record<string, unknown>, expected as Record<string, unknown>);
    }
    return jsonEqual(actual, expected);
  });
}

/**
 * The tag filter forms the clients send: a plain array or `{or: [...]}` is one OR-group; `{and: [{or}, ...]}` ANDs
 * groups; the list query's `tags[0][]=a&tags[1][]=b` arrives as an array of arrays. `field` names the input in errors.
 */
export function parseTagsFilter(value: unknown, field = 'tags'): TagGroups | undefined {
  if (value === undefined || value === null) return undefined;
  const strings = (list: unknown, where: string): string[] => {
    if (!Array.isArray(list) || !list.every((tag) => typeof tag === 'string')) throw new ValidationError([`${where} must be an array of strings`]);
    return list as string[];
  };
  if (Array.isArray(value)) {
    if (value.every((item) => typeof item === 'string')) return value.length ? [value as string[]] : undefined;
    if (value.every((item) => Array.isArray(item))) return value.map((group, i) => strings(group, `${field}[${i}]`)).filter((g) => g.length);
    throw new ValidationError([`${field} must be an array of strings, {or: [...]} or {and: [{or: [...]}, ...]}`]);
  }
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if ('or' in object) {
      const group = strings(object.or, `${field}.or`);
      return group.length ? [group] : undefined;
    }
    if ('and' in object && Array.isArray(object.and)) {
      return object.and
        .map((group, i) => {
          if (!group || typeof group !== 'object' || !('or' in group)) throw new ValidationError([`${field}.and[${i}] must be {or: [...]}`]);
          return strings((group as { or: unknown }).or, `${field}.and[${i}].or`);
        })
        .filter((g) => g.length);
    }
  }
  throw new ValidationError([`${field} must be an array of strings, {or: [...]} or {and: [{or: [...]}, ...]}`]);
}

/** True when every key of `filter` equals the same key of `data` (JSON equality). */
export function matchesDataFilter(data: Record<string, unknown> | undefined, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([key, expected]) => jsonEqual(data?.[key], expected));
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => jsonEqual((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** The stored form of a message's tags for filtering with LIKE: `|a|b|` (a tag holding `|` cannot be matched). */
export function tagsColumn(tags: string[] | undefined): string {
  return tags && tags.length ? `|${tags.join('|')}|` : '';
}
