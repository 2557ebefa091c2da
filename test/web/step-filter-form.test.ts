import { describe, expect, it } from 'vitest';
import { evaluateStepFilters } from '../../src/domain/step-filters.js';
import type { StepFilter } from '../../src/domain/types.js';
import { emptyGroup, readFilters, toStepFilters, valueHint, type FilterGroup } from '../../web/src/step-filter-form.js';

const proOrTeam: StepFilter[] = [
  {
    isNegated: false,
    type: 'GROUP',
    value: 'OR',
    children: [
      { field: 'plan', value: 'pro', operator: 'EQUAL', on: 'payload' },
      { field: 'plan', value: 'team', operator: 'EQUAL', on: 'payload' },
    ],
  },
  { isNegated: false, type: 'GROUP', value: 'AND', children: [{ field: 'locale', value: 'en, fr', operator: 'IN', on: 'subscriber' }] },
];

describe('step filter form: stored filters → form groups', () => {
  it('reads no filters (absent, null or empty) as no groups', () => {
    expect(readFilters(undefined)).toEqual({ ok: true, groups: [] });
    expect(readFilters(null)).toEqual({ ok: true, groups: [] });
    expect(readFilters([])).toEqual({ ok: true, groups: [] });
  });

  it('reads plain AND/OR groups into rows, in order', () => {
    expect(readFilters(proOrTeam)).toEqual({
      ok: true,
      groups: [
        { value: 'OR', rows: [{ on: 'payload', field: 'plan', operator: 'EQUAL', value: 'pro' }, { on: 'payload', field: 'plan', operator: 'EQUAL', value: 'team' }] },
        { value: 'AND', rows: [{ on: 'subscriber', field: 'locale', operator: 'IN', value: 'en, fr' }] },
      ],
    });
  });

  it('accepts a group without isNegated/type and an empty group', () => {
    expect(readFilters([{ value: 'AND', children: [] }])).toEqual({ ok: true, groups: [{ value: 'AND', rows: [] }] });
  });

  it('round-trips: form groups written back equal the stored list', () => {
    const reading = readFilters(proOrTeam);
    if (!reading.ok) throw new Error(reading.reason);
    expect(toStepFilters(reading.groups)).toEqual(proOrTeam);
  });

  it.each([
    ['a negated group', [{ ...proOrTeam[0], isNegated: true }], /group 1 is negated/],
    ['another group type', [{ ...proOrTeam[0], type: 'BOOLEAN' }], /type BOOLEAN/],
    ['an unknown join', [{ ...proOrTeam[0], value: 'XOR' }], /"XOR"/],
    ['an extra group key', [{ ...proOrTeam[0], label: 'x' }], /"label" setting/],
    ['a part with another key (a webhook part)', [{ ...proOrTeam[0], children: [{ ...proOrTeam[0].children[0], webhookUrl: 'https://x' }] }], /part 1 has a "webhookUrl"/],
    ['a part on another source', [{ ...proOrTeam[0], children: [{ field: 'x', value: '1', operator: 'EQUAL', on: 'webhook' }] }], /on "webhook"/],
    ['an unknown operator', [{ ...proOrTeam[0], children: [{ field: 'x', value: '1', operator: 'IS_DEFINED', on: 'payload' }] }], /IS_DEFINED/],
    ['a numeric value', [{ ...proOrTeam[0], children: [{ field: 'x', value: 5, operator: 'EQUAL', on: 'payload' }] }], /value that is not text/],
    ['a group that is not an object', ['nope'], /group 1 is not an object/],
    ['not a list', { value: 'AND' }, /not a list/],
  ])('cannot express %s (the JSON editor is kept)', (_name, filters, reason) => {
    const reading = readFilters(filters);
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.reason).toMatch(reason);
  });
});

describe('step filter form: form groups → StepFilter[]', () => {
  it('writes GROUP filters the server evaluates as the form says', () => {
    const groups: FilterGroup[] = [{ value: 'AND', rows: [{ on: 'payload', field: ' plan ', operator: 'EQUAL', value: 'pro' }] }];
    const filters = toStepFilters(groups);
    expect(filters).toEqual([{ isNegated: false, type: 'GROUP', value: 'AND', children: [{ field: 'plan', value: 'pro', operator: 'EQUAL', on: 'payload' }] }]);
    expect(evaluateStepFilters(filters, { subscriber: {}, payload: { plan: 'pro' } }).passed).toBe(true);
    expect(evaluateStepFilters(filters, { subscriber: {}, payload: { plan: 'free' } }).passed).toBe(false);
  });

  it('OR within a group, AND across groups', () => {
    const reading = readFilters(proOrTeam);
    if (!reading.ok) throw new Error(reading.reason);
    const filters = toStepFilters(reading.groups);
    const run = (plan: string, locale: string) => evaluateStepFilters(filters, { subscriber: { locale }, payload: { plan } }).passed;
    expect([run('pro', 'en'), run('team', 'fr'), run('free', 'en'), run('pro', 'de')]).toEqual([true, true, false, false]);
  });

  it('no groups is no filters; a new group starts with one empty payload EQUAL condition', () => {
    expect(toStepFilters([])).toEqual([]);
    expect(emptyGroup()).toEqual({ value: 'AND', rows: [{ on: 'payload', field: '', operator: 'EQUAL', value: '' }] });
  });

  it('refuses a condition without a field, naming it', () => {
    const groups: FilterGroup[] = [emptyGroup(), { value: 'OR', rows: [{ on: 'payload', field: 'a', operator: 'EQUAL', value: '' }, { on: 'subscriber', field: '  ', operator: 'EQUAL', value: 'x' }] }];
    expect(() => toStepFilters(groups.slice(1))).toThrow('Filter group 1, condition 2: the field is empty');
    expect(() => toStepFilters(groups)).toThrow('Filter group 1, condition 1: the field is empty');
  });

  it('hints how list and range values are written', () => {
    expect(valueHint('BETWEEN')).toMatch(/comma/);
    expect(valueHint('IN')).toMatch(/Comma/);
    expect(valueHint('EQUAL')).toBeUndefined();
  });
});
