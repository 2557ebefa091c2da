import { LRUCache } from 'lru-cache';
import type { InboxAudience } from '../realtime/ports.js';

/**
 * The Inbox's read answers (`GET /v1/inbox/notifications` and `/count`), kept as the bytes sent, per subscriber and
 * URL, until something changes that subscriber's Inbox. Novu does the same with its feed and count caches; here the
 * invalidation rides on the realtime events every Inbox-changing write already announces after it committed
 * (`RealtimeNotifier`: a message delivered, messages changed, the subscriber's record changed).
 *
 * A read races the writes: it may read the store, a write commits and announces, and only then the read's answer
 * arrives. So a read takes a ticket before it reads (`begin`), and its answer is kept only if no change of that
 * subscriber was announced since the ticket; an entry is served only if it is newer than the subscriber's last change.
 *
 * Only exact where every write of the Inbox is announced in this process (embedded mode); buildApp turns it on only
 * there. The TTL bounds the damage of a write path that forgot to announce.
 */
export class InboxReadCache {
  /** Advances on every change: tickets and change marks are values of it. */
  private clock = 0;
  private readonly entries: LRUCache<string, CachedAnswer>;
  /** The clock at each subscriber's last change; bounded, the largest evicted mark covers every forgotten one. */
  private readonly changedAt: LRUCache<string, number>;
  private forgottenChangesBefore = 0;

  constructor(options: { maxBytes: number; ttlMs: number; maxTrackedSubscribers?: number }) {
    this.entries = new LRUCache<string, CachedAnswer>({
      maxSize: options.maxBytes,
      sizeCalculation: (answer, key) => answer.body.length + key.length + ENTRY_OVERHEAD_BYTES,
      ttl: options.ttlMs,
      // The TTL is a safety net, not a freshness rule: checking it on every read is enough, no timers.
      ttlAutopurge: false,
    });
    this.changedAt = new LRUCache<string, number>({
      max: options.maxTrackedSubscribers ?? 100_000,
      dispose: (mark, _key, reason) => {
        if (reason === 'evict') this.forgottenChangesBefore = Math.max(this.forgottenChangesBefore, mark);
      },
    });
  }

  /** Taken before reading the store for an answer that may be kept. */
  begin(): ReadTicket {
    return this.clock as ReadTicket;
  }

  /** The kept answer to `url` for this subscriber, when nothing changed since it was read. */
  get(audience: InboxAudience, url: string): string | undefined {
    const subscriberKey = keyOf(audience);
    const answer = this.entries.get(`${subscriberKey} ${url}`);
    if (answer === undefined) return undefined;
    return answer.ticket >= this.lastChange(subscriberKey) ? answer.body : undefined;
  }

  /** Keeps an answer read after `ticket`, unless the subscriber's Inbox changed meanwhile. */
  set(audience: InboxAudience, url: string, ticket: ReadTicket, body: string): void {
    const subscriberKey = keyOf(audience);
    if (ticket < this.lastChange(subscriberKey)) return;
    this.entries.set(`${subscriberKey} ${url}`, { ticket, body });
  }

  /** The subscriber's Inbox changed (called once the write is committed): its kept answers are stale. */
  invalidate(audience: InboxAudience): void {
    this.clock++;
    this.changedAt.set(keyOf(audience), this.clock);
  }

  /** Kept answers (for tests and diagnostics). */
  get size(): number {
    return this.entries.size;
  }

  private lastChange(subscriberKey: string): number {
    return this.changedAt.get(subscriberKey) ?? this.forgottenChangesBefore;
  }
}

/** A value of the cache's clock, taken before a read. */
export type ReadTicket = number & { readonly __readTicket: unique symbol };

interface CachedAnswer {
  ticket: ReadTicket;
  body: string;
}

/** What an entry costs besides its body and key (the entry object, the LRU's slots), for the byte bound. */
const ENTRY_OVERHEAD_BYTES = 200;

function keyOf(audience: InboxAudience): string {
  return `${audience.environmentId}/${audience.subscriberRecordId}`;
}
