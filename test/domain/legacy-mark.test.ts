import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/domain/errors.js';
import { marksOf } from '../../src/domain/legacy-mark.js';

describe('marksOf (the legacy markAs body)', () => {
  it('turns each flag into its mark, read first so an explicit seen wins', () => {
    expect(marksOf({ seen: true })).toEqual(['seen']);
    expect(marksOf({ read: true })).toEqual(['read']);
    expect(marksOf({ read: false })).toEqual(['unread']);
    expect(marksOf({ seen: false })).toEqual(['unseen']);
    expect(marksOf({ read: true, seen: false })).toEqual(['read', 'unseen']);
    expect(marksOf({ seen: true, read: false })).toEqual(['unread', 'seen']);
  });

  it('needs at least one flag', () => {
    expect(() => marksOf({})).toThrow(ValidationError);
    expect(() => marksOf({})).toThrow('mark must contain seen or read');
  });
});
