import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, get, patch, post, put, seg } from '../api';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { CHANNELS, CHANNEL_LABEL, SEVERITIES, STEP_TYPES } from '../status';
import { StepFilterEditor } from '../step-filter-editor';
import { CodeFirstWorkflow } from './CodeFirstWorkflow';
import { readFilters, toStepFilters, type FilterGroup } from '../step-filter-form';
import { Checkbox, ErrorNote, Field, Loading, Notice, PageHeader, Select, useAction, useLoad } from '../ui';

interface StepDraft {
  _id?: string;
  stepId?: string;
  name: string;
  type: string;
  active: boolean;
  controls: Record<string, string>;
  /** Control values the form has no field for, as JSON. */
  extra: string;
  /** The filters in the form; undefined when the form cannot express them (then `filters` holds their JSON). */
  filterGroups?: FilterGroup[];
  /** Why the form cannot show the stored filters. */
  filtersNote?: string;
  filters: string;
}

interface WorkflowDraft {
  _id?: string;
  workflowId: string;
  name: string;
  description: string;
  tags: string;
  active: boolean;
  severity: string;
  critical: boolean;
  preferencesAllEnabled: boolean;
  preferencesReadOnly: boolean;
  channelEnabled: Record<string, boolean>;
  steps: StepDraft[];
}

const UNITS = ['seconds', 'minutes', 'hours', 'days', 'weeks', 'months'];

/** The form fields of each step type; other control values stay editable as JSON. */
const CONTROL_FIELDS: Record<string, Array<{ name: string; label: string; kind?: 'number' | 'multiline' | 'unit' | 'method' }>> = {
  email: [
    { name: 'subject', label: 'Subject' },
    { name: 'body', label: 'Body (HTML, Liquid)', kind: 'multiline' },
  ],
  in_app: [
    { name: 'subject', label: 'Subject' },
    { name: 'body', label: 'Body (Liquid)', kind: 'multiline' },
  ],
  sms: [{ name: 'body', label: 'Text (Liquid)', kind: 'multiline' }],
  chat: [{ name: 'body', label: 'Text (Liquid)', kind: 'multiline' }],
  push: [
    { name: 'subject', label: 'Title' },
    { name: 'body', label: 'Body (Liquid)', kind: 'multiline' },
  ],
  delay: [
    { name: 'amount', label: 'Wait for', kind: 'number' },
    { name: 'unit', label: 'Unit', kind: 'unit' },
  ],
  digest: [
    { name: 'amount', label: 'Collect events for', kind: 'number' },
    { name: 'unit', label: 'Unit', kind: 'unit' },
    { name: 'digestKey', label: 'Digest key (payload path, optional)' },
  ],
  throttle: [
    { name: 'threshold', label: 'At most this many', kind: 'number' },
    { name: 'amount', label: 'per', kind: 'number' },
    { name: 'unit', label: 'Unit', kind: 'unit' },
  ],
  http_request: [
    { name: 'method', label: 'Method', kind: 'method' },
    { name: 'url', label: 'URL' },
  ],
  custom: [],
};

const PREVIEWABLE = new Set(['email', 'in_app', 'sms', 'chat', 'push']);

function stepFromApi(step: any): StepDraft {
  const fields = CONTROL_FIELDS[step.type] ?? [];
  const values: Record<string, unknown> = { ...(step.controlValues ?? {}) };
  const controls: Record<string, string> = {};
  for (const field of fields) {
    if (values[field.name] !== undefined) controls[field.name] = String(values[field.name]);
    delete values[field.name];
  }
  const reading = readFilters(step.filters);
  return {
    _id: step._id,
    stepId: step.stepId,
    name: step.name,
    type: step.type,
    active: step.active !== false,
    controls,
    extra: Object.keys(values).length ? JSON.stringify(values, null, 2) : '',
    filterGroups: reading.ok ? reading.groups : undefined,
    filtersNote: reading.ok ? undefined : reading.reason,
    filters: !reading.ok && step.filters?.length ? JSON.stringify(step.filters, null, 2) : '',
  };
}

function parseJson(text: string, what: string): any {
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what} is not valid JSON`);
  }
}

export function controlValuesOf(step: StepDraft): Record<string, unknown> {
  const values: Record<string, unknown> = { ...(parseJson(step.extra, `Other control values of step "${step.name}"`) ?? {}) };
  for (const field of CONTROL_FIELDS[step.type] ?? []) {
    const raw = step.controls[field.name];
    if (raw === undefined || raw === '') continue;
    values[field.name] = field.kind === 'number' ? Number(raw) : raw;
  }
  if (step.type === 'delay' && values.type === undefined) values.type = 'regular';
  if (step.type === 'digest' && values.type === undefined) values.type = 'regular';
  return values;
}

function draftFromApi(workflow: any): WorkflowDraft {
  const preferences = workflow.preferences?.user ?? workflow.preferences?.default;
  return {
    _id: workflow._id,
    workflowId: workflow.workflowId,
    name: workflow.name,
    description: workflow.description ?? '',
    tags: (workflow.tags ?? []).join(', '),
    active: workflow.active,
    severity: workflow.severity ?? 'none',
    critical: Boolean(workflow.critical),
    preferencesAllEnabled: preferences?.all?.enabled ?? true,
    preferencesReadOnly: preferences?.all?.readOnly ?? false,
    channelEnabled: Object.fromEntries(CHANNELS.map((channel) => [channel, preferences?.channels?.[channel]?.enabled ?? true])),
    steps: (workflow.steps ?? []).map(stepFromApi),
  };
}

const EMPTY: WorkflowDraft = {
  workflowId: '',
  name: '',
  description: '',
  tags: '',
  active: true,
  severity: 'none',
  critical: false,
  preferencesAllEnabled: true,
  preferencesReadOnly: false,
  channelEnabled: Object.fromEntries(CHANNELS.map((channel) => [channel, true])),
  steps: [],
};

function bodyOf(draft: WorkflowDraft) {
  return {
    name: draft.name,
    description: draft.description,
    tags: draft.tags.split(',').map((tag) => tag.trim()).filter(Boolean),
    active: draft.active,
    severity: draft.severity,
    critical: draft.critical,
    preferences: {
      user: {
        all: { enabled: draft.preferencesAllEnabled, readOnly: draft.preferencesReadOnly },
        channels: Object.fromEntries(CHANNELS.map((channel) => [channel, { enabled: draft.channelEnabled[channel] }])),
      },
    },
    steps: draft.steps.map((step) => ({
      ...(step._id ? { _id: step._id } : {}),
      ...(step.stepId ? { stepId: step.stepId } : {}),
      name: step.name,
      type: step.type,
      active: step.active,
      controlValues: controlValuesOf(step),
      filters: step.filterGroups ? toStepFilters(step.filterGroups) : (parseJson(step.filters, `Filters of step "${step.name}"`) ?? []),
    })),
  };
}

export function WorkflowEditPage({ id }: { id?: string }) {
  const { isAdmin } = useSession();
  const loaded = useLoad((signal) => (id ? get(`/v2/workflows/${seg(id)}`, { signal }) : Promise.resolve(undefined)), [id]);
  const [draft, setDraft] = useState<WorkflowDraft>(EMPTY);
  const [saved, setSaved] = useState<string>();
  const [draftSource, setDraftSource] = useState<any>();
  const save = useAction();
  useEffect(() => {
    if (loaded.data?.data) setDraft(draftFromApi(loaded.data.data));
    setDraftSource(undefined);
  }, [loaded.data]);

  if (id && !loaded.data && !loaded.error) return <Loading what="the workflow" />;
  if (id && loaded.error) {
    return (
      <>
        <PageHeader title="Workflow" />
        <ErrorNote error={loaded.error} />
      </>
    );
  }
  // Code-first workflows: read-only steps, control values only (CodeFirstWorkflow).
  if (id && loaded.data?.data?.origin === 'external') return <CodeFirstWorkflow workflow={draftSource ?? loaded.data.data} onChanged={setDraftSource} />;
  const readOnly = !isAdmin;
  const set = <K extends keyof WorkflowDraft>(name: K, value: WorkflowDraft[K]) => setDraft((current) => ({ ...current, [name]: value }));
  const setStep = (index: number, next: Partial<StepDraft>) =>
    setDraft((current) => ({ ...current, steps: current.steps.map((step, i) => (i === index ? { ...step, ...next } : step)) }));
  const moveStep = (index: number, by: number) =>
    setDraft((current) => {
      const steps = [...current.steps];
      const [step] = steps.splice(index, 1);
      steps.splice(index + by, 0, step);
      return { ...current, steps };
    });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(undefined);
    void save.run(async () => {
      const body = bodyOf(draft);
      const answer = id ? await put(`/v2/workflows/${seg(id)}`, body) : await post('/v2/workflows', { ...body, workflowId: draft.workflowId });
      setDraft(draftFromApi(answer.data));
      setSaved(`Saved at ${new Date().toLocaleTimeString()}`);
      if (!id) navigate(`/workflows/${seg(answer.data._id)}`, { replace: true });
    });
  };

  return (
    <>
      <p className="crumbs">
        <Link to="/workflows">Workflows</Link> / {id ? draft.name || 'workflow' : 'new'}
      </p>
      <PageHeader title={id ? `Workflow: ${draft.name}` : 'New workflow'}>
        {id && isAdmin && (
          <button
            type="button"
            disabled={save.pending}
            onClick={() => save.run(async () => { const answer = await patch(`/v2/workflows/${seg(id)}`, { active: !draft.active }); setDraft(draftFromApi(answer.data)); })}
          >
            {draft.active ? 'Deactivate' : 'Activate'}
          </button>
        )}
      </PageHeader>
      {readOnly && <Notice>You have read-only access: an administrator can change workflows.</Notice>}
      <form onSubmit={submit} className="workflow-form">
        <fieldset disabled={readOnly}>
          <legend>Workflow</legend>
          <div className="grid-2">
            <Field label="Name" value={draft.name} onChange={(value) => set('name', value)} required />
            <Field
              label="Identifier (used to trigger)"
              value={draft.workflowId}
              onChange={(value) => set('workflowId', value)}
              required
              disabled={Boolean(id)}
              hint="Letters, digits, - _ . : ; fixed once created."
            />
            <Field label="Description" value={draft.description} onChange={(value) => set('description', value)} />
            <Field label="Tags (comma separated)" value={draft.tags} onChange={(value) => set('tags', value)} />
            <Select label="Severity" value={draft.severity} onChange={(value) => set('severity', value)} options={SEVERITIES.map((severity) => [severity, severity])} />
            <div className="checks">
              <Checkbox label="Active" checked={draft.active} onChange={(value) => set('active', value)} />
              <Checkbox label="Critical (ignores subscriber preferences)" checked={draft.critical} onChange={(value) => set('critical', value)} />
            </div>
          </div>
        </fieldset>
        <fieldset disabled={readOnly}>
          <legend>Default preferences</legend>
          <div className="checks">
            <Checkbox label="Enabled for subscribers" checked={draft.preferencesAllEnabled} onChange={(value) => set('preferencesAllEnabled', value)} />
            <Checkbox label="Subscribers cannot change them (read-only)" checked={draft.preferencesReadOnly} onChange={(value) => set('preferencesReadOnly', value)} />
            {CHANNELS.map((channel) => (
              <Checkbox
                key={channel}
                label={`${CHANNEL_LABEL[channel]} on`}
                checked={draft.channelEnabled[channel]}
                onChange={(value) => set('channelEnabled', { ...draft.channelEnabled, [channel]: value })}
              />
            ))}
          </div>
        </fieldset>
        <h2>Steps</h2>
        {draft.steps.length === 0 && <Notice>No steps yet: add the first one below.</Notice>}
        <ol className="steps">
          {draft.steps.map((step, index) => (
            <li key={step._id ?? `new-${index}`} className="step-card">
              <fieldset disabled={readOnly}>
                <legend>
                  Step {index + 1}: {step.name || CHANNEL_LABEL[step.type]}
                </legend>
                <div className="grid-2">
                  <Field label="Step name" value={step.name} onChange={(value) => setStep(index, { name: value })} required />
                  <Select label="Type" value={step.type} onChange={(value) => setStep(index, { type: value, controls: {} })} options={STEP_TYPES.map((type) => [type, CHANNEL_LABEL[type]])} disabled={Boolean(step._id)} />
                  {(CONTROL_FIELDS[step.type] ?? []).map((field) =>
                    field.kind === 'unit' ? (
                      <Select key={field.name} label={field.label} value={step.controls[field.name] ?? ''} onChange={(value) => setStep(index, { controls: { ...step.controls, [field.name]: value } })} options={[['', 'choose'], ...UNITS.map((unit): [string, string] => [unit, unit])]} />
                    ) : field.kind === 'method' ? (
                      <Select key={field.name} label={field.label} value={step.controls[field.name] ?? 'POST'} onChange={(value) => setStep(index, { controls: { ...step.controls, [field.name]: value } })} options={['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].map((method): [string, string] => [method, method])} />
                    ) : (
                      <Field
                        key={field.name}
                        label={field.label}
                        type={field.kind === 'number' ? 'number' : 'text'}
                        multiline={field.kind === 'multiline'}
                        rows={step.type === 'email' ? 8 : 3}
                        value={step.controls[field.name] ?? ''}
                        onChange={(value) => setStep(index, { controls: { ...step.controls, [field.name]: value } })}
                      />
                    ),
                  )}
                </div>
                {step.filterGroups ? (
                  <StepFilterEditor stepName={step.name || `step ${index + 1}`} groups={step.filterGroups} onChange={(groups) => setStep(index, { filterGroups: groups })} readOnly={readOnly} />
                ) : (
                  <div className="filter-json">
                    <p className="notice">The filter form cannot show these filters ({step.filtersNote}): edit them as JSON.</p>
                    <Field
                      label="Filters (JSON array)"
                      multiline
                      value={step.filters}
                      onChange={(value) => setStep(index, { filters: value })}
                      hint='[{"isNegated":false,"type":"GROUP","value":"AND","children":[{"field":"plan","value":"pro","operator":"EQUAL","on":"payload"}]}]'
                    />
                  </div>
                )}
                <details>
                  <summary>Other control values</summary>
                  <Field
                    label="Other control values (JSON object)"
                    multiline
                    value={step.extra}
                    onChange={(value) => setStep(index, { extra: value })}
                    hint='For example {"editorType":"html"}, an http_request body, or a custom step’s values.'
                  />
                </details>
                <div className="inline">
                  <Checkbox label="Step active" checked={step.active} onChange={(value) => setStep(index, { active: value })} />
                  <button type="button" onClick={() => moveStep(index, -1)} disabled={index === 0}>
                    Move up
                  </button>
                  <button type="button" onClick={() => moveStep(index, 1)} disabled={index === draft.steps.length - 1}>
                    Move down
                  </button>
                  <button type="button" className="danger" onClick={() => set('steps', draft.steps.filter((_, i) => i !== index))}>
                    Remove step
                  </button>
                </div>
              </fieldset>
              {id && step._id && PREVIEWABLE.has(step.type) && <StepPreview workflowId={id} step={step} />}
            </li>
          ))}
        </ol>
        {!readOnly && <AddStep onAdd={(type) => set('steps', [...draft.steps, { name: `${CHANNEL_LABEL[type]} step`, type, active: true, controls: {}, extra: '', filterGroups: [], filters: '' }])} />}
        <ErrorNote error={save.error} />
        {saved && <p role="status" className="ok-text">{saved}</p>}
        {!readOnly && (
          <div className="form-actions">
            <button type="submit" className="primary" disabled={save.pending}>
              {save.pending ? 'Saving…' : id ? 'Save workflow' : 'Create workflow'}
            </button>
          </div>
        )}
      </form>
      {id && draft.workflowId && <TestTrigger workflowId={draft.workflowId} disabled={readOnly} />}
    </>
  );
}

function AddStep({ onAdd }: { onAdd(type: string): void }) {
  const [type, setType] = useState('in_app');
  return (
    <div className="inline add-step">
      <Select label="New step type" value={type} onChange={setType} options={STEP_TYPES.map((value) => [value, CHANNEL_LABEL[value]])} />
      <button type="button" onClick={() => onAdd(type)}>
        Add step
      </button>
    </div>
  );
}

/** Renders the step's current (unsaved) controls through the server's preview route, as delivery would. */
function StepPreview({ workflowId, step }: { workflowId: string; step: StepDraft }) {
  const [payload, setPayload] = useState('{}');
  const [result, setResult] = useState<{ subject?: string; body?: string; error?: string }>();
  const key = JSON.stringify([step.controls, step.extra, payload]);
  useEffect(() => {
    const timer = setTimeout(async () => {
      try {
        const answer = await post(`/v2/workflows/${seg(workflowId)}/step/${seg(step.stepId ?? step._id ?? '')}/preview`, {
          controlValues: controlValuesOf(step),
          previewPayload: { payload: parseJson(payload, 'Sample payload') ?? {} },
        });
        const result = answer.data?.result ?? {};
        // A template that does not render is an answer, not an HTTP error: shown next to the step.
        if (result.error) return setResult({ error: `${result.error.title ?? 'Preview failed'}: ${result.error.message ?? ''}` });
        const preview = result.preview ?? {};
        setResult({ subject: preview.subject ?? preview.title, body: typeof preview.body === 'string' ? preview.body : JSON.stringify(preview.body ?? preview) });
      } catch (cause) {
        setResult({ error: cause instanceof ApiError && cause.status === 404 ? 'Preview is not available for this step.' : cause instanceof Error ? cause.message : String(cause) });
      }
    }, 400);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, workflowId]);
  return (
    <section className="preview" aria-label={`Preview of ${step.name}`}>
      <h3>Preview</h3>
      <Field label="Sample payload (JSON)" multiline rows={2} value={payload} onChange={setPayload} />
      {!result && <p className="muted">Rendering…</p>}
      {result?.error && <ErrorNote error={result.error} />}
      {result && !result.error && (
        <div className="preview-output" aria-live="polite">
          {result.subject && (
            <p>
              <strong>{result.subject}</strong>
            </p>
          )}
          {step.type === 'email' ? (
            <iframe title={`Email preview of ${step.name}`} sandbox="" srcDoc={result.body ?? ''} className="email-frame" />
          ) : (
            <p className="message-text">{result.body}</p>
          )}
        </div>
      )}
    </section>
  );
}

function TestTrigger({ workflowId, disabled }: { workflowId: string; disabled: boolean }) {
  const [subscriberId, setSubscriberId] = useState('');
  const [payload, setPayload] = useState('{}');
  const trigger = useAction();
  const subscribers = useLoad((signal) => get('/v2/subscribers', { signal, query: { limit: 50 } }), []);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void trigger.run(async () => {
      const answer = await post('/v1/events/trigger', { name: workflowId, to: subscriberId, payload: parseJson(payload, 'Payload') ?? {} });
      navigate(`/activity?transactionId=${encodeURIComponent(answer.data.transactionId)}`);
    });
  };
  const known: Array<{ subscriberId: string; email?: string }> = subscribers.data?.data ?? [];
  return (
    <form className="test-trigger" onSubmit={submit} aria-labelledby="test-trigger-title">
      <h2 id="test-trigger-title">Send a test event</h2>
      <fieldset disabled={disabled}>
        <div className="grid-2">
          <Field label="Subscriber ID" value={subscriberId} onChange={setSubscriberId} required hint={known.length ? `Known: ${known.slice(0, 5).map((subscriber) => subscriber.subscriberId).join(', ')}` : undefined} />
          <Field label="Payload (JSON)" multiline rows={3} value={payload} onChange={setPayload} />
        </div>
        <ErrorNote error={trigger.error} />
        <button type="submit" className="primary" disabled={trigger.pending}>
          Trigger and open its activity
        </button>
      </fieldset>
    </form>
  );
}
