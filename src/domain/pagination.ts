/** Page arithmetic for list operations. Pages are zero-based, as in Novu's API. */
import type { Page } from './types.js';

/**
 * The rows to fetch for a page: `offset` = page × limit and `limit` = limit + 1. The extra row only tells
 * `toPage` whether another page exists; pass the fetched rows straight to `toPage`.
 */
export function pageWindow(page: number, limit: number): { offset: number; limit: number } {
  assertPaging(page, limit);
  return { offset: page * limit, limit: limit + 1 };
}

/**
 * A page from rows fetched with `pageWindow` (up to limit + 1 of them): `data` holds at most `limit` rows and
 * `hasMore` is true only when the extra row came back. `totalCount` is set only when given.
 */
export function toPage<T>(rowsFetchedWithOneExtra: T[], page: number, limit: number, totalCount?: number): Page<T> {
  assertPaging(page, limit);
  const result: Page<T> = {
    data: rowsFetchedWithOneExtra.slice(0, limit),
    page,
    pageSize: limit,
    hasMore: rowsFetchedWithOneExtra.length > limit,
  };
  if (totalCount !== undefined) result.totalCount = totalCount;
  return result;
}

function assertPaging(page: number, limit: number): void {
  if (!Number.isSafeInteger(page) || page < 0) throw new RangeError(`page must be a non-negative integer, got ${page}`);
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
}
