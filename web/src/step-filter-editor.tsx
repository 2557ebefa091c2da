import {
  FILTER_OPERATORS,
  FILTER_SOURCES,
  OPERATOR_LABEL,
  emptyGroup,
  emptyRow,
  valueHint,
  type FilterGroup,
  type FilterRow,
} from './step-filter-form';
import { Field, Select } from './ui';

const SOURCE_LABEL: Record<string, string> = { payload: 'Payload', subscriber: 'Subscriber' };
const OPERATOR_OPTIONS = FILTER_OPERATORS.map((operator): [string, string] => [operator, OPERATOR_LABEL[operator]]);
const SOURCE_OPTIONS = FILTER_SOURCES.map((source): [string, string] => [source, SOURCE_LABEL[source] ?? source]);

/**
 * A step's filters as a form: groups (all must match), each joining its conditions with AND or OR. The enclosing
 * fieldset's `disabled` makes it read-only; `readOnly` also hides the add and remove buttons.
 */
export function StepFilterEditor({ stepName, groups, onChange, readOnly }: { stepName: string; groups: FilterGroup[]; onChange(groups: FilterGroup[]): void; readOnly: boolean }) {
  const setGroup = (index: number, next: FilterGroup) => onChange(groups.map((group, i) => (i === index ? next : group)));
  const setRow = (groupIndex: number, rowIndex: number, next: Partial<FilterRow>) =>
    setGroup(groupIndex, { ...groups[groupIndex], rows: groups[groupIndex].rows.map((row, i) => (i === rowIndex ? { ...row, ...next } : row)) });

  return (
    <fieldset className="filter-editor">
      <legend>Filters</legend>
      {groups.length === 0 ? (
        <p className="hint">No filters: the step runs for every event.</p>
      ) : (
        <p className="hint">The step runs only when every group matches.</p>
      )}
      {groups.map((group, groupIndex) => (
        <fieldset key={groupIndex} className="filter-group">
          <legend>Filter group {groupIndex + 1}</legend>
          <div className="filter-join">
            <Select
              label="Match"
              value={group.value}
              onChange={(value) => setGroup(groupIndex, { ...group, value: value === 'OR' ? 'OR' : 'AND' })}
              options={[
                ['AND', 'all conditions (AND)'],
                ['OR', 'any condition (OR)'],
              ]}
            />
          </div>
          {group.rows.length === 0 && <p className="hint">No conditions: this group always matches.</p>}
          <ol className="filter-rows">
            {group.rows.map((row, rowIndex) => (
              <li key={rowIndex} className="filter-row" aria-label={`Condition ${rowIndex + 1} of group ${groupIndex + 1}`}>
                <Select label="On" value={row.on} onChange={(value) => setRow(groupIndex, rowIndex, { on: value as FilterRow['on'] })} options={SOURCE_OPTIONS} />
                <Field label="Field" value={row.field} onChange={(value) => setRow(groupIndex, rowIndex, { field: value })} placeholder="plan or order.total" />
                <Select label="Operator" value={row.operator} onChange={(value) => setRow(groupIndex, rowIndex, { operator: value as FilterRow['operator'] })} options={OPERATOR_OPTIONS} />
                <Field label="Value" value={row.value} onChange={(value) => setRow(groupIndex, rowIndex, { value })} hint={valueHint(row.operator)} />
                {!readOnly && (
                  <button
                    type="button"
                    className="danger filter-remove"
                    aria-label={`Remove condition ${rowIndex + 1} of group ${groupIndex + 1}`}
                    onClick={() => setGroup(groupIndex, { ...group, rows: group.rows.filter((_, i) => i !== rowIndex) })}
                  >
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ol>
          {!readOnly && (
            <div className="inline">
              <button type="button" onClick={() => setGroup(groupIndex, { ...group, rows: [...group.rows, emptyRow()] })}>
                Add condition<span className="visually-hidden"> to group {groupIndex + 1}</span>
              </button>
              <button type="button" className="danger" onClick={() => onChange(groups.filter((_, i) => i !== groupIndex))}>
                Remove group {groupIndex + 1}
              </button>
            </div>
          )}
        </fieldset>
      ))}
      {!readOnly && (
        <button type="button" onClick={() => onChange([...groups, emptyGroup()])}>
          Add filter group<span className="visually-hidden"> to {stepName}</span>
        </button>
      )}
    </fieldset>
  );
}
