import { describe, expect, it } from 'vitest';
import { newTransactionId } from '../../src/domain/ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newTransactionId', () => {
  it('is a UUID version 7 whose first 48 bits are the milliseconds given', () => {
    const now = Date.parse('2026-11-27T07:00:00.123Z');
    const id = newTransactionId(now);
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.replace('-', '').slice(0, 12), 16)).toBe(now);
  });

  it('sorts by time (the transaction indexes grow at their ends) and does not repeat', () => {
    const start = Date.parse('2026-11-27T07:00:00Z');
    const ids = Array.from({ length: 5000 }, (_, i) => newTransactionId(start + Math.floor(i / 10)));
    for (let i = 10; i < ids.length; i += 10) expect(ids[i - 1]! < ids[i]!).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
  });
});
