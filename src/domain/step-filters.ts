/**
 * Step filters: whether a workflow step runs for a given subscriber and payload, with Novu's semantics.
 *
 * - An empty filter list passes. Every StepFilter (group) in the list must pass (AND across groups).
 * - Within a group, `value: 'AND'` needs every child to pass, `'OR'` needs one; an empty children list passes.
 * - `isNegated` inverts the group's result.
 * - A child's `field` is a dot path relative to `sources[on]` (`order.total` on payload). A path that does not
 *   resolve but starts with the source's own name (`payload.order.total` on payload) is retried without it,
 *   because dashboards write both forms.
 * - A missing field (undefined or null) fails the positive operators and passes NOT_EQUAL, NOT_IN,
 *   NOT_BETWEEN and NOT_LIKE.
 */
import type { FieldFilterPart, FilterOperator, FilterSource, StepFilter } from './types.js';

export interface FilterSources {
  subscriber: Record<string, unknown>;
  payload: Record<string, unknown>;
}

export interface FilterResult {
  passed: boolean;
  /** Why the list failed, readable in an execution detail; absent when it passed. */
  reason?: string;
}

/** Evaluates a step's filter list; see the module comment for the exact semantics. */
export function evaluateStepFilters(filters: StepFilter[] | undefined, sources: FilterSources): FilterResult {
  for (const [index, group] of (filters ?? []).entries()) {
    const result = evaluateGroup(group, sources);
    if (!result.passed) {
      const prefix = (filters ?? []).length > 1 ? `Filter group ${index + 1}: ` : '';
      return { passed: false, reason: prefix + result.reason };
    }
  }
  return { passed: true };
}

function evaluateGroup(group: StepFilter, sources: FilterSources): FilterResult {
  const children = group.children ?? [];
  const results = children.map((child) => evaluateChild(child, sources));
  const isOr = group.value === 'OR';
  const raw = children.length === 0 || (isOr ? results.some((r) => r.passed) : results.every((r) => r.passed));

  if (group.isNegated) {
    if (!raw) return { passed: true };
    const passedTexts = results.filter((r) => r.passed).map((r) => r.text);
    const what = passedTexts.length > 0 ? passedTexts.join(isOr ? ' or ' : ' and ') : 'An empty filter group';
    return { passed: false, reason: `Negated filter failed: ${what} matched` };
  }
  if (raw) return { passed: true };
  const failures = results.filter((r) => !r.passed).map((r) => `${r.text} failed${r.why ? ` (${r.why})` : ''}`);
  return {
    passed: false,
    reason: isOr ? `None of the OR filters passed: ${failures.join('; ')}` : failures[0],
  };
}

interface ChildResult {
  passed: boolean;
  /** "Filter payload.amount LARGER 100" */
  text: string;
  /** The actual value or the configuration problem, for a failure. */
  why?: string;
}

function evaluateChild(child: FieldFilterPart, sources: FilterSources): ChildResult {
  // Stored filters come from JSON: tolerate a number or an array where the type says string.
  const value = typeof child.value === 'string' ? child.value : toComparableString(child.value ?? '');
  const text = `Filter ${child.on}.${child.field} ${child.operator} ${value}`;
  const source = sourceOf(child.on, sources);
  if (!source) return { passed: false, text, why: `unknown filter source "${String(child.on)}"` };
  const actual = resolveFieldValue(source, String(child.field ?? ''), child.on);
  const outcome = applyOperator(child.operator, actual, value);
  if (typeof outcome === 'string') return { passed: false, text, why: outcome };
  return { passed: outcome, text, why: outcome ? undefined : describeActual(actual) };
}

function sourceOf(on: FilterSource, sources: FilterSources): Record<string, unknown> | undefined {
  if (on === 'payload') return sources.payload ?? {};
  if (on === 'subscriber') return sources.subscriber ?? {};
  return undefined;
}

function resolveFieldValue(source: Record<string, unknown>, field: string, on: string): unknown {
  const direct = valueAtPath(source, field);
  if (direct !== undefined) return direct;
  const prefix = `${on}.`;
  return field.startsWith(prefix) ? valueAtPath(source, field.slice(prefix.length)) : undefined;
}

/**
 * The value at a dot path (`order.items.0.sku`) in a plain object, or undefined. Only own properties are
 * followed, so `constructor` or `__proto__` never reach the prototype chain.
 */
export function valueAtPath(root: unknown, path: string): unknown {
  if (path === '') return undefined;
  let current: unknown = root;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

function describeActual(actual: unknown): string {
  if (actual === undefined || actual === null) return 'field missing';
  const text = toComparableString(actual);
  return `actual: ${text.length > 100 ? `${text.slice(0, 100)}…` : text}`;
}

const NEGATED_OPERATORS = new Set<FilterOperator>(['NOT_EQUAL', 'NOT_IN', 'NOT_BETWEEN', 'NOT_LIKE']);

/** Returns the outcome, or a string describing why the filter itself is unusable (which fails it). */
function applyOperator(operator: FilterOperator, actual: unknown, value: string): boolean | string {
  if (actual === undefined || actual === null) {
    if (!isKnownOperator(operator)) return `unknown operator "${String(operator)}"`;
    return NEGATED_OPERATORS.has(operator);
  }
  switch (operator) {
    case 'LARGER':
      return compareOrdered(actual, value, (c) => c > 0);
    case 'SMALLER':
      return compareOrdered(actual, value, (c) => c < 0);
    case 'LARGER_EQUAL':
      return compareOrdered(actual, value, (c) => c >= 0);
    case 'SMALLER_EQUAL':
      return compareOrdered(actual, value, (c) => c <= 0);
    case 'EQUAL':
      return looselyEqual(actual, value);
    case 'NOT_EQUAL':
      return !looselyEqual(actual, value);
    case 'IN':
    case 'ANY_IN':
      return isAnyIn(actual, value);
    case 'NOT_IN':
      return !isAnyIn(actual, value);
    case 'ALL_IN': {
      const contained = new Set(asList(actual).map(toComparableString));
      return parseList(value).every((wanted) => contained.has(wanted));
    }
    case 'BETWEEN':
    case 'NOT_BETWEEN': {
      const between = isBetween(actual, value);
      if (typeof between === 'string') return between;
      return operator === 'BETWEEN' ? between : !between;
    }
    case 'LIKE':
      return isLike(actual, value);
    case 'NOT_LIKE':
      return !isLike(actual, value);
    default:
      return `unknown operator "${String(operator)}"`;
  }
}

const KNOWN_OPERATORS = new Set<string>([
  'LARGER', 'SMALLER', 'LARGER_EQUAL', 'SMALLER_EQUAL', 'EQUAL', 'NOT_EQUAL', 'ALL_IN', 'ANY_IN', 'NOT_IN',
  'BETWEEN', 'NOT_BETWEEN', 'LIKE', 'NOT_LIKE', 'IN',
]);

function isKnownOperator(operator: string): operator is FilterOperator {
  return KNOWN_OPERATORS.has(operator);
}

/** Strings for equality and membership: 5 → "5", true → "true", objects → JSON. */
function toComparableString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value) ?? String(value);
}

/** A finite number from a number or a numeric string; booleans and blank strings are not numbers. */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Milliseconds since the epoch for an ISO 8601 date or date-time string. */
function asIsoDate(value: unknown): number | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.getTime();
  if (typeof value !== 'string' || !ISO_DATE.test(value.trim())) return undefined;
  const parsed = Date.parse(value.trim());
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** Numeric when both sides are numbers, else dates when both are ISO dates, else string order. */
function compareValues(actual: unknown, expected: string): number {
  const [a, b] = [asNumber(actual), asNumber(expected)];
  if (a !== undefined && b !== undefined) return Math.sign(a - b);
  const [da, db] = [asIsoDate(actual), asIsoDate(expected)];
  if (da !== undefined && db !== undefined) return Math.sign(da - db);
  const [sa, sb] = [toComparableString(actual), expected];
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function compareOrdered(actual: unknown, expected: string, accept: (comparison: number) => boolean): boolean {
  return accept(compareValues(actual, expected));
}

/** Novu coerces the filter value to the field's type: 5 equals "5" and "5.0", true equals "true". */
function looselyEqual(actual: unknown, expected: string): boolean {
  if (typeof actual === 'number') {
    const b = asNumber(expected);
    return b !== undefined && actual === b;
  }
  if (typeof actual === 'boolean') return String(actual) === expected.trim().toLowerCase();
  return toComparableString(actual) === expected;
}

/** A filter list value: a JSON array (`["a","b"]`) or comma-separated text (`a, b`), as trimmed strings. */
function parseList(value: string): string[] {
  const trimmed = value.trim();
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return parsed.map(toComparableString);
    } catch {
      // not JSON: fall through to the comma-separated form
    }
  }
  if (trimmed === '') return [];
  return trimmed.split(',').map((item) => item.trim());
}

function asList(actual: unknown): unknown[] {
  return Array.isArray(actual) ? actual : [actual];
}

function isAnyIn(actual: unknown, value: string): boolean {
  const allowed = new Set(parseList(value));
  return asList(actual).some((item) => allowed.has(toComparableString(item)));
}

/** Inclusive range "a,b" of numbers or ISO dates; a malformed value is reported as a string. */
function isBetween(actual: unknown, value: string): boolean | string {
  const bounds = parseList(value);
  if (bounds.length !== 2) return `BETWEEN needs two comma-separated bounds, got "${value}"`;
  const [low, high] = bounds;
  const [n, nl, nh] = [asNumber(actual), asNumber(low), asNumber(high)];
  if (nl !== undefined && nh !== undefined) return n !== undefined && n >= nl && n <= nh;
  const [d, dl, dh] = [asIsoDate(actual), asIsoDate(low), asIsoDate(high)];
  if (dl !== undefined && dh !== undefined) return d !== undefined && d >= dl && d <= dh;
  return `BETWEEN bounds must both be numbers or ISO dates, got "${value}"`;
}

function isLike(actual: unknown, value: string): boolean {
  const needle = value.toLowerCase();
  return asList(actual).some((item) => toComparableString(item).toLowerCase().includes(needle));
}
