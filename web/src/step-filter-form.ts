/**
 * The workflow editor's filter form, as pure data: form groups ⇄ a step's StepFilter[] (the model the server
 * evaluates, src/domain/step-filters.ts), and whether the form can show a stored filter list without losing anything.
 * What it cannot show (negated groups, other group types, parts with other keys) stays editable as JSON.
 */
import {
  FILTER_OPERATORS,
  FILTER_SOURCES,
  type FilterOperator,
  type FilterSource,
  type StepFilter,
} from '../../src/domain/types.js';

export { FILTER_OPERATORS, FILTER_SOURCES };

/** One condition: `on`.`field` `operator` `value`. */
export interface FilterRow {
  on: FilterSource;
  field: string;
  operator: FilterOperator;
  value: string;
}

/** A filter group: its rows joined by AND (all) or OR (any). */
export interface FilterGroup {
  value: 'AND' | 'OR';
  rows: FilterRow[];
}

/** Readable operator names for the select; the stored value stays the constant. */
export const OPERATOR_LABEL: Record<FilterOperator, string> = {
  EQUAL: 'equals',
  NOT_EQUAL: 'does not equal',
  LARGER: 'is greater than',
  SMALLER: 'is less than',
  LARGER_EQUAL: 'is at least',
  SMALLER_EQUAL: 'is at most',
  LIKE: 'contains',
  NOT_LIKE: 'does not contain',
  IN: 'is one of',
  ANY_IN: 'has any of',
  ALL_IN: 'has all of',
  NOT_IN: 'is none of',
  BETWEEN: 'is between',
  NOT_BETWEEN: 'is not between',
};

/** How the value of an operator is written, for the value field's hint; undefined for a single value. */
export function valueHint(operator: FilterOperator): string | undefined {
  if (operator === 'BETWEEN' || operator === 'NOT_BETWEEN') return 'Two bounds, comma separated: 10,20';
  if (operator === 'IN' || operator === 'ANY_IN' || operator === 'ALL_IN' || operator === 'NOT_IN') return 'Comma separated: a, b, c';
  return undefined;
}

export function emptyRow(): FilterRow {
  return { on: 'payload', field: '', operator: 'EQUAL', value: '' };
}

export function emptyGroup(): FilterGroup {
  return { value: 'AND', rows: [emptyRow()] };
}

export type FormReading = { ok: true; groups: FilterGroup[] } | { ok: false; reason: string };

const GROUP_KEYS = new Set(['isNegated', 'type', 'value', 'children']);
const PART_KEYS = new Set(['field', 'value', 'operator', 'on']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The form's groups for a stored filter list, or why the form cannot express it. Expressible means the groups
 * written back by toStepFilters evaluate exactly as the stored list: plain (not negated) GROUPs of AND or OR whose
 * parts are string field/value with a known operator and source, and no other keys.
 */
export function readFilters(filters: unknown): FormReading {
  if (filters === undefined || filters === null) return { ok: true, groups: [] };
  if (!Array.isArray(filters)) return { ok: false, reason: 'the filters are not a list' };
  const groups: FilterGroup[] = [];
  for (const [index, group] of filters.entries()) {
    const where = `group ${index + 1}`;
    if (!isRecord(group)) return { ok: false, reason: `${where} is not an object` };
    const extra = Object.keys(group).find((key) => !GROUP_KEYS.has(key));
    if (extra) return { ok: false, reason: `${where} has a "${extra}" setting` };
    if (group.isNegated !== undefined && group.isNegated !== false) return { ok: false, reason: `${where} is negated` };
    if (group.type !== undefined && group.type !== 'GROUP') return { ok: false, reason: `${where} is of type ${String(group.type)}` };
    if (group.value !== 'AND' && group.value !== 'OR') return { ok: false, reason: `${where} joins its parts with "${String(group.value)}"` };
    const children = group.children ?? [];
    if (!Array.isArray(children)) return { ok: false, reason: `${where} has no list of parts` };
    const rows: FilterRow[] = [];
    for (const [partIndex, part] of children.entries()) {
      const partWhere = `${where}, part ${partIndex + 1}`;
      if (!isRecord(part)) return { ok: false, reason: `${partWhere} is not an object` };
      const partExtra = Object.keys(part).find((key) => !PART_KEYS.has(key));
      if (partExtra) return { ok: false, reason: `${partWhere} has a "${partExtra}" setting` };
      if (!(FILTER_SOURCES as readonly unknown[]).includes(part.on)) return { ok: false, reason: `${partWhere} is on "${String(part.on)}"` };
      if (!(FILTER_OPERATORS as readonly unknown[]).includes(part.operator)) return { ok: false, reason: `${partWhere} uses the operator "${String(part.operator)}"` };
      if (typeof part.field !== 'string') return { ok: false, reason: `${partWhere} has a field that is not text` };
      if (typeof part.value !== 'string') return { ok: false, reason: `${partWhere} has a value that is not text` };
      rows.push({ on: part.on as FilterSource, field: part.field, operator: part.operator as FilterOperator, value: part.value });
    }
    groups.push({ value: group.value, rows });
  }
  return { ok: true, groups };
}

/** The StepFilter list the form's groups stand for; a condition without a field is an error the editor shows. */
export function toStepFilters(groups: FilterGroup[]): StepFilter[] {
  return groups.map((group, index) => ({
    isNegated: false,
    type: 'GROUP',
    value: group.value,
    children: group.rows.map((row, rowIndex) => {
      const field = row.field.trim();
      if (!field) throw new Error(`Filter group ${index + 1}, condition ${rowIndex + 1}: the field is empty`);
      return { field, value: row.value, operator: row.operator, on: row.on };
    }),
  }));
}
