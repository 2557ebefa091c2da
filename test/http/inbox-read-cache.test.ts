import { describe, expect, it } from 'vitest';
import { InboxReadCache } from '../../src/http/inbox-read-cache.js';

/** The kept Inbox answers: served until the subscriber's Inbox changes, never across a change a read raced. */
describe('InboxReadCache', () => {
  const alice = { environmentId: 'env-1', subscriberRecordId: 'sub-alice' };
  const bob = { environmentId: 'env-1', subscriberRecordId: 'sub-bob' };
  const aliceElsewhere = { environmentId: 'env-2', subscriberRecordId: 'sub-alice' };
  const cache = () => new InboxReadCache({ maxBytes: 1024 * 1024, ttlMs: 60_000 });

  it('serves a kept answer per subscriber and URL', () => {
    const reads = cache();
    reads.set(alice, '/v1/inbox/notifications?limit=10', reads.begin(), '{"a":1}');
    expect(reads.get(alice, '/v1/inbox/notifications?limit=10')).toBe('{"a":1}');
    expect(reads.get(alice, '/v1/inbox/notifications?limit=20')).toBeUndefined();
    expect(reads.get(bob, '/v1/inbox/notifications?limit=10')).toBeUndefined();
    expect(reads.get(aliceElsewhere, '/v1/inbox/notifications?limit=10')).toBeUndefined();
  });

  it("a change of the subscriber's Inbox makes all its answers stale, and only its own", () => {
    const reads = cache();
    reads.set(alice, '/list', reads.begin(), 'alice list');
    reads.set(alice, '/count', reads.begin(), 'alice count');
    reads.set(bob, '/list', reads.begin(), 'bob list');
    reads.invalidate(alice);
    expect(reads.get(alice, '/list')).toBeUndefined();
    expect(reads.get(alice, '/count')).toBeUndefined();
    expect(reads.get(bob, '/list')).toBe('bob list');
    // Read again after the change: kept again.
    reads.set(alice, '/list', reads.begin(), 'alice list 2');
    expect(reads.get(alice, '/list')).toBe('alice list 2');
  });

  it('an answer read before a change that was announced while it was being read is not kept', () => {
    const reads = cache();
    const ticket = reads.begin();
    reads.invalidate(alice); // a write committed while the read was under way
    reads.set(alice, '/list', ticket, 'maybe stale');
    expect(reads.get(alice, '/list')).toBeUndefined();
    // Another subscriber's change does not stop it.
    const bobTicket = reads.begin();
    reads.invalidate(alice);
    reads.set(bob, '/list', bobTicket, 'bob list');
    expect(reads.get(bob, '/list')).toBe('bob list');
  });

  it('stays within its byte bound, dropping the least recently used answers', () => {
    const reads = new InboxReadCache({ maxBytes: 5_000, ttlMs: 60_000 });
    const body = 'x'.repeat(1_000);
    for (let i = 0; i < 10; i++) reads.set(alice, `/list?page=${i}`, reads.begin(), body);
    expect(reads.size).toBeLessThan(5);
    expect(reads.get(alice, '/list?page=9')).toBe(body);
    expect(reads.get(alice, '/list?page=0')).toBeUndefined();
  });

  it('forgetting old change marks never revives a stale answer', () => {
    const reads = new InboxReadCache({ maxBytes: 1024 * 1024, ttlMs: 60_000, maxTrackedSubscribers: 2 });
    const ticket = reads.begin();
    reads.set(alice, '/list', ticket, 'before');
    reads.invalidate(alice);
    // Two more subscribers change: alice's mark is evicted from the bounded table.
    reads.invalidate(bob);
    reads.invalidate(aliceElsewhere);
    expect(reads.get(alice, '/list')).toBeUndefined();
    reads.set(alice, '/list', ticket, 'raced');
    expect(reads.get(alice, '/list')).toBeUndefined();
  });

  it('drops answers older than its TTL', async () => {
    const reads = new InboxReadCache({ maxBytes: 1024 * 1024, ttlMs: 30 });
    reads.set(alice, '/list', reads.begin(), 'old');
    expect(reads.get(alice, '/list')).toBe('old');
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(reads.get(alice, '/list')).toBeUndefined();
  });
});
