import { describe, expect, it } from 'vitest';
import { pageWindow, toPage } from '../../src/domain/pagination.js';

describe('pageWindow', () => {
  it('asks for one row more than the page size, at the page offset', () => {
    expect(pageWindow(0, 10)).toEqual({ offset: 0, limit: 11 });
    expect(pageWindow(3, 25)).toEqual({ offset: 75, limit: 26 });
  });
  it('rejects negative or fractional pages and non-positive limits', () => {
    expect(() => pageWindow(-1, 10)).toThrow(/page/);
    expect(() => pageWindow(1.5, 10)).toThrow(/page/);
    expect(() => pageWindow(0, 0)).toThrow(/limit/);
    expect(() => pageWindow(0, Number.NaN)).toThrow(/limit/);
  });
});

describe('toPage', () => {
  it('has more only when the extra row came back, and never returns it', () => {
    expect(toPage([1, 2, 3], 0, 2)).toEqual({ data: [1, 2], page: 0, pageSize: 2, hasMore: true });
    expect(toPage([1, 2], 0, 2)).toEqual({ data: [1, 2], page: 0, pageSize: 2, hasMore: false });
    expect(toPage([1], 4, 2)).toEqual({ data: [1], page: 4, pageSize: 2, hasMore: false });
    expect(toPage([], 9, 2)).toEqual({ data: [], page: 9, pageSize: 2, hasMore: false });
  });
  it('carries totalCount only when given', () => {
    expect(toPage([1, 2, 3], 1, 2, 5)).toEqual({ data: [1, 2], page: 1, pageSize: 2, hasMore: true, totalCount: 5 });
    expect(toPage([1], 0, 2, 0)).toHaveProperty('totalCount', 0);
    expect(toPage([1], 0, 2)).not.toHaveProperty('totalCount');
  });
  it('works with pageWindow end to end', () => {
    const rows = Array.from({ length: 7 }, (_, i) => i);
    const fetch = (page: number) => {
      const window = pageWindow(page, 3);
      return toPage(rows.slice(window.offset, window.offset + window.limit), page, 3, rows.length);
    };
    expect(fetch(0)).toMatchObject({ data: [0, 1, 2], hasMore: true });
    expect(fetch(1)).toMatchObject({ data: [3, 4, 5], hasMore: true });
    expect(fetch(2)).toMatchObject({ data: [6], hasMore: false, totalCount: 7 });
  });
});
