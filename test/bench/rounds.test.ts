import { describe, expect, it } from 'vitest';
import { median } from '../../bench/lib/rounds.js';

describe('median', () => {
  it('takes the middle value of an odd count, in any order', () => {
    expect(median([30, 10, 20])).toBe(20);
  });

  it('averages the two middle values of an even count', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('is not moved by one disturbed round', () => {
    expect(median([1000, 1010, 250])).toBe(1000);
    expect(median([12.1, 11.9, 44.4])).toBe(12.1);
  });

  it('refuses an empty list', () => {
    expect(() => median([])).toThrow('median of no values');
  });
});
