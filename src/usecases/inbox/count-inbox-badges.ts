import { isoNow } from '../../domain/clock.js';
import type { InboxAudience } from '../../realtime/ports.js';
import type { Deps } from '../deps.js';

/** The most a count event reports; `hasMore` says there are more (the older widget shows "99+"). */
export const REALTIME_COUNT_CAP = 100;

/**
 * The payloads of the realtime count events, read by both client generations from one payload:
 * `unread_count_changed {counts, unreadCount, hasMore}` (@novu/js 3.x reads `counts`, the older widget `unreadCount`)
 * and `unseen_count_changed {unseenCount, hasMore}`.
 */
export interface InboxBadges {
  unreadCount: { total: number; severity: { high: number; medium: number; low: number; none: number } };
  /** Unseen in-app messages, snoozed ones left out (Novu's count), capped at REALTIME_COUNT_CAP. */
  unseenCount: number;
  unseenHasMore: boolean;
  /** The older widget's unread count: unread in-app messages, archived ones included, snoozed ones not; capped. */
  widgetUnreadCount: number;
  widgetUnreadHasMore: boolean;
}

/**
 * A subscriber's badges as the bells show them: the `<Inbox />` unread count = neither read, archived nor snoozed
 * (the filters that bell counts with), by severity; and the older widget's unread and unseen counts (every
 * non-snoozed in-app message, the widget has no archive). Two statements over the subscriber's Inbox index.
 */
export async function countInboxBadges(deps: Pick<Deps, 'store' | 'clock'>, audience: InboxAudience): Promise<InboxBadges> {
  const [counts, [unread, unseen]] = await Promise.all([
    deps.store.messages.countInboxBadges(audience.environmentId, audience.subscriberRecordId, isoNow(deps.clock)),
    deps.store.messages.countInbox(audience.environmentId, audience.subscriberRecordId, [
      { read: false, snoozed: false },
      { seen: false, snoozed: false },
    ]),
  ]);
  return {
    unreadCount: counts.unread,
    unseenCount: Math.min(unseen, REALTIME_COUNT_CAP),
    unseenHasMore: unseen > REALTIME_COUNT_CAP,
    widgetUnreadCount: Math.min(unread, REALTIME_COUNT_CAP),
    widgetUnreadHasMore: unread > REALTIME_COUNT_CAP,
  };
}
