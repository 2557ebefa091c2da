import { describe, expect, it } from 'vitest';
import { evaluateStepFilters, valueAtPath } from '../../src/domain/step-filters.js';
import type { FieldFilterPart, FilterOperator, FilterSource, StepFilter } from '../../src/domain/types.js';

const payload = {
  amount: 150,
  amountText: '150',
  name: 'Order Shipped',
  flag: true,
  tags: ['vip', 'beta', 7],
  order: { total: 42.5, items: [{ sku: 'A1' }, { sku: 'B2' }] },
  createdAt: '2026-03-10T12:00:00.000Z',
  day: '2026-03-10',
  nothing: null,
};
const subscriber = { subscriberId: 'sub-1', email: 'Ada@Example.com', locale: 'en-GB', data: { plan: 'pro', seats: 5 } };
const sources = { payload, subscriber };

function child(field: string, operator: FilterOperator, value: string, on: FilterSource = 'payload'): FieldFilterPart {
  return { field, operator, value, on };
}
function group(children: FieldFilterPart[], value: 'AND' | 'OR' = 'AND', isNegated = false): StepFilter {
  return { isNegated, type: 'GROUP', value, children };
}
function passes(part: FieldFilterPart): boolean {
  return evaluateStepFilters([group([part])], sources).passed;
}

describe('evaluateStepFilters: structure', () => {
  it('passes an empty or absent filter list', () => {
    expect(evaluateStepFilters([], sources)).toEqual({ passed: true });
    expect(evaluateStepFilters(undefined, sources)).toEqual({ passed: true });
  });

  it('passes a group with no children, and fails it when negated', () => {
    expect(evaluateStepFilters([group([])], sources).passed).toBe(true);
    expect(evaluateStepFilters([group([], 'AND', true)], sources).passed).toBe(false);
  });

  it('AND needs every child, OR needs one', () => {
    const yes = child('amount', 'LARGER', '100');
    const no = child('amount', 'SMALLER', '100');
    expect(evaluateStepFilters([group([yes, yes])], sources).passed).toBe(true);
    expect(evaluateStepFilters([group([yes, no])], sources).passed).toBe(false);
    expect(evaluateStepFilters([group([no, yes], 'OR')], sources).passed).toBe(true);
    expect(evaluateStepFilters([group([no, no], 'OR')], sources).passed).toBe(false);
  });

  it('needs every group to pass (AND across groups)', () => {
    const yes = group([child('amount', 'LARGER', '100')]);
    const no = group([child('amount', 'LARGER', '1000')]);
    expect(evaluateStepFilters([yes, yes], sources).passed).toBe(true);
    const result = evaluateStepFilters([yes, no], sources);
    expect(result.passed).toBe(false);
    expect(result.reason).toBe('Filter group 2: Filter payload.amount LARGER 1000 failed (actual: 150)');
  });

  it('isNegated inverts AND and OR groups', () => {
    const yes = child('amount', 'LARGER', '100');
    const no = child('amount', 'SMALLER', '100');
    expect(evaluateStepFilters([group([yes, no], 'AND', true)], sources).passed).toBe(true);
    expect(evaluateStepFilters([group([yes, yes], 'AND', true)], sources).passed).toBe(false);
    expect(evaluateStepFilters([group([no, no], 'OR', true)], sources).passed).toBe(true);
    const negatedOr = evaluateStepFilters([group([no, yes], 'OR', true)], sources);
    expect(negatedOr.passed).toBe(false);
    expect(negatedOr.reason).toBe('Negated filter failed: Filter payload.amount LARGER 100 matched');
  });

  it('mixes a negated OR group with an AND group, on both sources', () => {
    const filters = [
      group([child('data.plan', 'EQUAL', 'pro', 'subscriber'), child('amount', 'LARGER_EQUAL', '150')]),
      group([child('email', 'LIKE', 'spam', 'subscriber'), child('name', 'LIKE', 'cancel')], 'OR', true),
    ];
    expect(evaluateStepFilters(filters, sources).passed).toBe(true);
    const blocked = evaluateStepFilters(filters, { payload: { ...payload, name: 'Order Cancelled' }, subscriber });
    expect(blocked.passed).toBe(false);
    expect(blocked.reason).toContain('Filter group 2');
  });

  it('explains the failing child of an AND group and every child of an OR group', () => {
    const and = evaluateStepFilters([group([child('amount', 'LARGER', '100'), child('amount', 'LARGER', '500')])], sources);
    expect(and.reason).toBe('Filter payload.amount LARGER 500 failed (actual: 150)');
    const or = evaluateStepFilters(
      [group([child('amount', 'LARGER', '500'), child('missing', 'EQUAL', 'x', 'subscriber')], 'OR')],
      sources,
    );
    expect(or.reason).toBe(
      'None of the OR filters passed: Filter payload.amount LARGER 500 failed (actual: 150); ' +
        'Filter subscriber.missing EQUAL x failed (field missing)',
    );
  });
});

describe('evaluateStepFilters: fields and sources', () => {
  it('reads dot paths relative to the source, including array indexes', () => {
    expect(passes(child('order.total', 'EQUAL', '42.5'))).toBe(true);
    expect(passes(child('order.items.1.sku', 'EQUAL', 'B2'))).toBe(true);
    expect(passes(child('data.seats', 'EQUAL', '5', 'subscriber'))).toBe(true);
  });

  it('accepts a path that repeats the source name', () => {
    expect(passes(child('payload.order.total', 'LARGER', '40'))).toBe(true);
    expect(passes(child('subscriber.email', 'LIKE', 'ada', 'subscriber'))).toBe(true);
  });

  it('reads the source named by `on`, not the other one', () => {
    expect(passes(child('email', 'LIKE', 'ada', 'payload'))).toBe(false);
    expect(passes(child('amount', 'EQUAL', '150', 'subscriber'))).toBe(false);
  });

  it('fails positive operators and passes NOT_* ones on a missing or null field', () => {
    for (const field of ['absent', 'nothing', 'order.absent.deeper']) {
      for (const op of ['LARGER', 'SMALLER', 'LARGER_EQUAL', 'SMALLER_EQUAL', 'EQUAL', 'IN', 'ANY_IN', 'ALL_IN', 'BETWEEN', 'LIKE'] as const) {
        expect(passes(child(field, op, '1,2')), `${field} ${op}`).toBe(false);
      }
      for (const op of ['NOT_EQUAL', 'NOT_IN', 'NOT_BETWEEN', 'NOT_LIKE'] as const) {
        expect(passes(child(field, op, '1,2')), `${field} ${op}`).toBe(true);
      }
    }
  });

  it('tolerates a non-string filter value from stored JSON', () => {
    expect(passes(child('amount', 'LARGER', 100 as unknown as string))).toBe(true);
    expect(passes(child('tags', 'ANY_IN', ['beta', 'x'] as unknown as string))).toBe(true);
    expect(passes(child('amount', 'EQUAL', undefined as unknown as string))).toBe(false);
  });

  it('never follows the prototype chain', () => {
    expect(passes(child('constructor', 'LIKE', 'function'))).toBe(false);
    expect(valueAtPath({ a: {} }, 'a.toString')).toBeUndefined();
    expect(valueAtPath({ a: 1 }, '')).toBeUndefined();
  });

  it('fails an unknown operator or source with a reason', () => {
    const badOp = evaluateStepFilters([group([child('amount', 'BIGGER' as FilterOperator, '1')])], sources);
    expect(badOp).toEqual({ passed: false, reason: 'Filter payload.amount BIGGER 1 failed (unknown operator "BIGGER")' });
    const badSource = evaluateStepFilters([group([child('amount', 'EQUAL', '1', 'webhook' as FilterSource)])], sources);
    expect(badSource.reason).toContain('unknown filter source "webhook"');
  });
});

describe('evaluateStepFilters: operators', () => {
  it('LARGER, SMALLER, LARGER_EQUAL, SMALLER_EQUAL compare numbers numerically', () => {
    expect(passes(child('amount', 'LARGER', '100'))).toBe(true);
    expect(passes(child('amount', 'LARGER', '150'))).toBe(false);
    expect(passes(child('amount', 'LARGER_EQUAL', '150'))).toBe(true);
    expect(passes(child('amount', 'SMALLER', '200'))).toBe(true);
    expect(passes(child('amount', 'SMALLER', '150'))).toBe(false);
    expect(passes(child('amount', 'SMALLER_EQUAL', '150'))).toBe(true);
    // numeric, not lexical: "150" > "9"
    expect(passes(child('amountText', 'LARGER', '9'))).toBe(true);
    expect(passes(child('amount', 'LARGER', ' 99.5 '))).toBe(true);
  });

  it('ordered operators compare ISO dates as dates', () => {
    expect(passes(child('createdAt', 'LARGER', '2026-03-10T11:59:59Z'))).toBe(true);
    expect(passes(child('createdAt', 'SMALLER', '2026-03-10T13:00:00+02:00'))).toBe(false);
    expect(passes(child('createdAt', 'LARGER_EQUAL', '2026-03-10T12:00:00Z'))).toBe(true);
    expect(passes(child('day', 'SMALLER_EQUAL', '2026-03-10'))).toBe(true);
    expect(passes(child('day', 'SMALLER', '2026-03-09'))).toBe(false);
  });

  it('ordered operators fall back to string order otherwise', () => {
    expect(passes(child('name', 'LARGER', 'Order A'))).toBe(true);
    expect(passes(child('name', 'SMALLER', 'Order A'))).toBe(false);
  });

  it('EQUAL and NOT_EQUAL normalise types', () => {
    expect(passes(child('amount', 'EQUAL', '150'))).toBe(true);
    expect(passes(child('amount', 'EQUAL', '150.0'))).toBe(true);
    expect(passes(child('amount', 'EQUAL', 'abc'))).toBe(false);
    expect(passes(child('amountText', 'EQUAL', '150'))).toBe(true);
    expect(passes(child('flag', 'EQUAL', 'true'))).toBe(true);
    expect(passes(child('flag', 'EQUAL', 'false'))).toBe(false);
    expect(passes(child('name', 'EQUAL', 'order shipped'))).toBe(false);
    expect(passes(child('name', 'NOT_EQUAL', 'order shipped'))).toBe(true);
    expect(passes(child('amount', 'NOT_EQUAL', '150'))).toBe(false);
    expect(passes(child('flag', 'NOT_EQUAL', 'false'))).toBe(true);
  });

  it('IN and ANY_IN accept comma-separated and JSON-array lists, and array fields', () => {
    for (const op of ['IN', 'ANY_IN'] as const) {
      expect(passes(child('locale', op, 'fr-FR, en-GB', 'subscriber'))).toBe(true);
      expect(passes(child('locale', op, '["fr-FR","en-GB"]', 'subscriber'))).toBe(true);
      expect(passes(child('locale', op, 'fr-FR,de-DE', 'subscriber'))).toBe(false);
      expect(passes(child('amount', op, '[150, 200]'))).toBe(true);
      expect(passes(child('tags', op, 'none,beta'))).toBe(true);
      expect(passes(child('tags', op, '7'))).toBe(true);
      expect(passes(child('tags', op, 'none'))).toBe(false);
      expect(passes(child('tags', op, ''))).toBe(false);
    }
  });

  it('NOT_IN is the complement of IN', () => {
    expect(passes(child('locale', 'NOT_IN', 'fr-FR,de-DE', 'subscriber'))).toBe(true);
    expect(passes(child('locale', 'NOT_IN', 'fr-FR,en-GB', 'subscriber'))).toBe(false);
    expect(passes(child('tags', 'NOT_IN', 'beta'))).toBe(false);
    expect(passes(child('tags', 'NOT_IN', 'alpha'))).toBe(true);
  });

  it('ALL_IN needs every listed value in the field', () => {
    expect(passes(child('tags', 'ALL_IN', 'vip,beta'))).toBe(true);
    expect(passes(child('tags', 'ALL_IN', '["vip", 7]'))).toBe(true);
    expect(passes(child('tags', 'ALL_IN', 'vip,alpha'))).toBe(false);
    expect(passes(child('name', 'ALL_IN', 'Order Shipped'))).toBe(true);
    expect(passes(child('name', 'ALL_IN', 'Order Shipped,x'))).toBe(false);
  });

  it('BETWEEN and NOT_BETWEEN are inclusive, for numbers and dates', () => {
    expect(passes(child('amount', 'BETWEEN', '100,200'))).toBe(true);
    expect(passes(child('amount', 'BETWEEN', '150,150'))).toBe(true);
    expect(passes(child('amount', 'BETWEEN', '151,200'))).toBe(false);
    expect(passes(child('amount', 'NOT_BETWEEN', '151,200'))).toBe(true);
    expect(passes(child('amount', 'NOT_BETWEEN', '1,150'))).toBe(false);
    expect(passes(child('createdAt', 'BETWEEN', '2026-03-01,2026-03-31'))).toBe(true);
    expect(passes(child('createdAt', 'BETWEEN', '2026-04-01, 2026-04-30'))).toBe(false);
    expect(passes(child('createdAt', 'NOT_BETWEEN', '2026-04-01,2026-04-30'))).toBe(true);
    // a non-numeric field is not between numeric bounds
    expect(passes(child('name', 'BETWEEN', '1,2'))).toBe(false);
    expect(passes(child('name', 'NOT_BETWEEN', '1,2'))).toBe(true);
  });

  it('BETWEEN with malformed bounds fails both ways with a reason', () => {
    for (const op of ['BETWEEN', 'NOT_BETWEEN'] as const) {
      const one = evaluateStepFilters([group([child('amount', op, '100')])], sources);
      expect(one.passed).toBe(false);
      expect(one.reason).toContain('needs two comma-separated bounds');
      const words = evaluateStepFilters([group([child('amount', op, 'a,b')])], sources);
      expect(words.reason).toContain('must both be numbers or ISO dates');
    }
  });

  it('LIKE and NOT_LIKE are case-insensitive substring matches', () => {
    expect(passes(child('email', 'LIKE', 'example.COM', 'subscriber'))).toBe(true);
    expect(passes(child('email', 'LIKE', 'gmail', 'subscriber'))).toBe(false);
    expect(passes(child('email', 'NOT_LIKE', 'gmail', 'subscriber'))).toBe(true);
    expect(passes(child('email', 'NOT_LIKE', 'ADA', 'subscriber'))).toBe(false);
    expect(passes(child('amount', 'LIKE', '15'))).toBe(true);
    expect(passes(child('tags', 'LIKE', 'VI'))).toBe(true);
  });
});
