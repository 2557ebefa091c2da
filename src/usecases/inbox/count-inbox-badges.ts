import { isoNow } from '../../domain/clock.js';
import type { InboxAudience } from '../../realtime/ports.js';
import type { Deps } from '../deps.js';

/** The payloads of the realtime count events: `unread_count_changed {counts}` and `unseen_count_changed {unseenCount}`. */
export interface InboxBadges {
  unreadCount: { total: number; severity: { high: number; medium: number; low: number; none: number } };
  unseenCount: number;
}

/**
 * A subscriber's Inbox badges as the bell shows them: unread = neither read, archived nor snoozed (the filters the
 * `<Inbox />` bell counts with), by severity; unseen = those of them not seen yet.
 */
export async function countInboxBadges(deps: Pick<Deps, 'store' | 'clock'>, audience: InboxAudience): Promise<InboxBadges> {
  const counts = await deps.store.messages.countInboxBadges(audience.environmentId, audience.subscriberRecordId, isoNow(deps.clock));
  return { unreadCount: counts.unread, unseenCount: counts.unseen };
}
