import { describe, expect, it } from 'vitest';
import { hasDocumentConditions, matchesDocumentConditions, matchesPayloadFilter } from '../../src/domain/inbox.js';

describe('the legacy widget filters checked on stored documents', () => {
  it('matches a payload filter leaf by leaf, as Novu flattens it', () => {
    const payload = { kind: 'invoice', amount: 12, author: { name: 'Grace', id: 7 }, tags: ['a', 'b'] };
    expect(matchesPayloadFilter(payload, {})).toBe(true);
    expect(matchesPayloadFilter(payload, { kind: 'invoice' })).toBe(true);
    expect(matchesPayloadFilter(payload, { kind: 'invoice', amount: 12 })).toBe(true);
    expect(matchesPayloadFilter(payload, { amount: '12' })).toBe(false);
    expect(matchesPayloadFilter(payload, { author: { name: 'Grace' } })).toBe(true);
    expect(matchesPayloadFilter(payload, { author: { name: 'Ada' } })).toBe(false);
    expect(matchesPayloadFilter(payload, { author: { missing: 1 } })).toBe(false);
    expect(matchesPayloadFilter(payload, { tags: ['a', 'b'] })).toBe(true);
    expect(matchesPayloadFilter(payload, { tags: ['a'] })).toBe(false);
    expect(matchesPayloadFilter(payload, { kind: { nested: 1 } })).toBe(false);
    expect(matchesPayloadFilter(undefined, { kind: 'invoice' })).toBe(false);
    expect(matchesPayloadFilter({ value: null }, { value: null })).toBe(true);
  });

  it('matches feeds by the identifier a message carries as _feedId; a message of no feed matches no feed filter', () => {
    expect(matchesDocumentConditions({ _feedId: 'news' }, { feeds: ['news', 'billing'] })).toBe(true);
    expect(matchesDocumentConditions({ _feedId: 'news' }, { feeds: ['billing'] })).toBe(false);
    expect(matchesDocumentConditions({ _feedId: null }, { feeds: ['news'] })).toBe(false);
    expect(matchesDocumentConditions({}, {})).toBe(true);
    expect(matchesDocumentConditions({ _feedId: 'news', payload: { a: 1 } }, { feeds: ['news'], payload: { a: 2 } })).toBe(false);
    expect(matchesDocumentConditions({ data: { x: 1 } }, { data: { x: 1 } })).toBe(true);
  });

  it('only data, feeds and payload send a filter to the document scan', () => {
    expect(hasDocumentConditions({ read: false, seen: true, snoozed: false })).toBe(false);
    expect(hasDocumentConditions({ feeds: ['news'] })).toBe(true);
    expect(hasDocumentConditions({ payload: {} })).toBe(true);
    expect(hasDocumentConditions({ data: {} })).toBe(true);
  });
});
