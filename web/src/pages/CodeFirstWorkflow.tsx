import { useEffect, useState, type FormEvent } from 'react';
import { get, patch, post, put, seg } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import { CHANNEL_LABEL } from '../status';
import { Checkbox, ErrorNote, Field, Loading, Notice, PageHeader, Select, useAction, useLoad } from '../ui';

/**
 * A workflow synced from an app's @novu/framework bridge (origin `external`): its steps are code, shown read-only.
 * Each step's control values are the one thing edited here, in a form built from the step's control JSON Schema;
 * the preview asks the bridge (`?action=preview`) to compute the step with the values in the form.
 */
export function CodeFirstWorkflow({ workflow, onChanged }: { workflow: any; onChanged(next: any): void }) {
  const { isAdmin } = useSession();
  const toggle = useAction();
  return (
    <>
      <p className="crumbs">
        <Link to="/workflows">Workflows</Link> / {workflow.name}
      </p>
      <PageHeader title={`Workflow: ${workflow.name}`}>
        {isAdmin && (
          <button
            type="button"
            disabled={toggle.pending}
            onClick={() => toggle.run(async () => onChanged((await patch(`/v2/workflows/${seg(workflow._id)}`, { active: !workflow.active })).data))}
          >
            {workflow.active ? 'Deactivate' : 'Activate'}
          </button>
        )}
      </PageHeader>
      <Notice>
        Defined in code (origin external): its steps and settings come from the app's bridge. Change the code and run{' '}
        <code>npx novu sync</code>; only control values are edited here.
      </Notice>
      <ErrorNote error={toggle.error} />
      <dl className="facts" aria-label="Workflow settings">
        <dt>Identifier</dt>
        <dd className="mono">{workflow.workflowId}</dd>
        <dt>Origin</dt>
        <dd>{workflow.origin}</dd>
        <dt>Severity</dt>
        <dd>{workflow.severity}</dd>
        <dt>Tags</dt>
        <dd>{workflow.tags.join(', ') || '—'}</dd>
        <dt>Critical</dt>
        <dd>{workflow.critical ? 'yes' : 'no'}</dd>
      </dl>
      <h2>Steps</h2>
      <ol className="steps">
        {workflow.steps.map((step: any) => (
          <li key={step._id} className="step-card">
            <StepControls workflowId={workflow.workflowId} step={step} readOnly={!isAdmin} />
          </li>
        ))}
      </ol>
    </>
  );
}

interface SchemaProperty {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  title?: string;
  description?: string;
}

type FormValue = string | boolean;

function typeOf(property: SchemaProperty): string {
  if (property.enum) return 'enum';
  const type = Array.isArray(property.type) ? property.type.find((entry) => entry !== 'null') : property.type;
  return type ?? 'json';
}

function toForm(property: SchemaProperty, value: unknown): FormValue {
  const type = typeOf(property);
  if (type === 'boolean') return value === true;
  if (value === undefined || value === null) return '';
  if (type === 'string' || type === 'number' || type === 'integer' || type === 'enum') return String(value);
  return JSON.stringify(value, null, 2);
}

/** The form's text back to the JSON values the schema expects; empty fields are left out (the code's default applies). */
function fromForm(properties: Record<string, SchemaProperty>, form: Record<string, FormValue>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const raw = form[name];
    const type = typeOf(property);
    if (type === 'boolean') {
      values[name] = raw === true;
      continue;
    }
    if (typeof raw !== 'string' || raw.trim() === '') continue;
    if (type === 'number' || type === 'integer') values[name] = Number(raw);
    else if (type === 'string') values[name] = raw;
    else if (type === 'enum') values[name] = property.enum?.find((option) => String(option) === raw) ?? raw;
    else {
      try {
        values[name] = JSON.parse(raw);
      } catch {
        throw new Error(`${property.title ?? name} is not valid JSON`);
      }
    }
  }
  return values;
}

function StepControls({ workflowId, step, readOnly }: { workflowId: string; step: any; readOnly: boolean }) {
  const path = `/v1/bridge/controls/${seg(workflowId)}/${seg(step.stepId)}`;
  const loaded = useLoad((signal) => get(path, { signal }), [path]);
  const [form, setForm] = useState<Record<string, FormValue>>({});
  const [saved, setSaved] = useState<string>();
  const save = useAction();
  const schema = loaded.data?.data?.schema ?? step.controls?.dataSchema ?? {};
  const properties: Record<string, SchemaProperty> = schema.properties ?? {};
  useEffect(() => {
    const values = loaded.data?.data?.values ?? {};
    setForm(Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, toForm(property, values[name] ?? property.default)])));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [loaded.data]);
  if (!loaded.data && !loaded.error) return <Loading what={`control values of ${step.stepId}`} />;
  const names = Object.keys(properties);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(undefined);
    void save.run(async () => {
      await put(path, { variables: fromForm(properties, form) });
      setSaved(`Control values saved at ${new Date().toLocaleTimeString()}`);
    });
  };
  return (
    <>
      <div>
      <h3>
        {step.stepId} <span className="muted">({CHANNEL_LABEL[step.type] ?? step.type})</span>
      </h3>
      <ErrorNote error={loaded.error} />
      {names.length === 0 ? (
        <p className="muted">This step has no controls in its code.</p>
      ) : (
        <form onSubmit={submit} aria-label={`Controls of ${step.stepId}`}>
          <fieldset disabled={readOnly}>
            <legend>Controls</legend>
            <div className="grid-2">
              {names.map((name) => {
                const property = properties[name];
                const label = property.title ?? name;
                const type = typeOf(property);
                const setValue = (value: FormValue) => setForm((current) => ({ ...current, [name]: value }));
                if (type === 'boolean') return <Checkbox key={name} label={label} checked={form[name] === true} onChange={setValue} />;
                if (type === 'enum') {
                  return <Select key={name} label={label} value={String(form[name] ?? '')} onChange={setValue} options={[['', 'default'], ...(property.enum ?? []).map((option): [string, string] => [String(option), String(option)])]} />;
                }
                return (
                  <Field
                    key={name}
                    label={label}
                    type={type === 'number' || type === 'integer' ? 'number' : 'text'}
                    multiline={type === 'json' || type === 'object' || type === 'array'}
                    value={String(form[name] ?? '')}
                    onChange={setValue}
                    hint={property.description}
                  />
                );
              })}
            </div>
            <ErrorNote error={save.error} />
            {saved && <p role="status" className="ok-text">{saved}</p>}
            {!readOnly && (
              <button type="submit" className="primary" disabled={save.pending}>
                Save controls <span className="visually-hidden">of {step.stepId}</span>
              </button>
            )}
          </fieldset>
        </form>
      )}
      </div>
      <BridgePreview workflowId={workflowId} step={step} controls={() => fromForm(properties, form)} />
    </>
  );
}

/** The step as the bridge computes it with the form's values (its ?action=preview), on demand. */
function BridgePreview({ workflowId, step, controls }: { workflowId: string; step: any; controls(): Record<string, unknown> }) {
  const [payload, setPayload] = useState('{}');
  const [result, setResult] = useState<any>();
  const preview = useAction();
  const run = () =>
    preview.run(async () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(payload || '{}');
      } catch {
        throw new Error('Sample payload is not valid JSON');
      }
      const answer = await post(`/v1/bridge/preview/${seg(workflowId)}/${seg(step.stepId)}`, { controls: controls(), payload: parsed });
      setResult(answer.data);
    });
  const outputs = result?.outputs ?? {};
  return (
    <section className="preview" aria-label={`Preview of ${step.stepId}`}>
      <h3>Preview through the bridge</h3>
      <Field label="Sample payload (JSON)" multiline rows={2} value={payload} onChange={setPayload} />
      <button type="button" onClick={() => void run()} disabled={preview.pending}>
        Preview <span className="visually-hidden">{step.stepId}</span>
      </button>
      <ErrorNote error={preview.error} />
      {result && (
        <div className="preview-output" aria-live="polite">
          {result.options?.skip && <p className="muted">The code skips this step.</p>}
          {outputs.subject && (
            <p>
              <strong>{String(outputs.subject)}</strong>
            </p>
          )}
          {step.type === 'email' ? (
            <iframe title={`Email preview of ${step.stepId}`} sandbox="" srcDoc={String(outputs.body ?? '')} className="email-frame" />
          ) : outputs.body !== undefined ? (
            <p className="message-text">{String(outputs.body)}</p>
          ) : (
            <pre className="mono">{JSON.stringify(outputs, null, 2)}</pre>
          )}
        </div>
      )}
    </section>
  );
}
