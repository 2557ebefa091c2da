import { useState, type FormEvent } from 'react';
import { del, get, post, put, seg } from '../api';
import { useSession } from '../session';
import { CHANNELS, CHANNEL_LABEL } from '../status';
import { Badge, Checkbox, Empty, ErrorNote, Field, Loading, Notice, PageHeader, Select, useAction, useLoad } from '../ui';

interface Integration {
  _id: string;
  name: string;
  identifier: string;
  providerId: string;
  channel?: string;
  active: boolean;
  primary: boolean;
  credentials?: Record<string, unknown>;
}

interface CredentialField {
  key: string;
  label: string;
  required: boolean;
  secret: boolean;
}

export interface Provider {
  id: string;
  channel: string;
  name: string;
  fields: CredentialField[];
}

const SECRET_FIELD = /key|secret|token|password|sid/i;

/** Accepts the catalogue as GET /v1/dashboard/providers answers it (entries with credential field lists). */
export function providersFrom(answer: any): Provider[] {
  const entries: any[] = Array.isArray(answer?.data) ? answer.data : Array.isArray(answer?.data?.providers) ? answer.data.providers : [];
  return entries
    .filter((entry) => entry && (entry.channel || entry.channels))
    .map((entry) => {
      const raw: any[] = entry.credentials ?? entry.credentialFields ?? entry.fields ?? entry.requiredCredentials ?? [];
      const fields = raw.map((field): CredentialField => {
        if (typeof field === 'string') return { key: field, label: field, required: true, secret: SECRET_FIELD.test(field) };
        const key = field.key ?? field.name;
        return { key, label: field.displayName ?? field.label ?? key, required: field.required !== false, secret: field.secure ?? field.secret ?? SECRET_FIELD.test(key) };
      });
      const id = entry.id ?? entry.providerId;
      // Providers Herald accepts but cannot deliver through are listed for configuration, and say so.
      const name = `${entry.displayName ?? entry.name ?? id}${entry.deliverable === false ? ' (configuration only)' : ''}`;
      return { id, channel: entry.channel ?? entry.channels[0], name, fields };
    });
}

export function IntegrationsPage() {
  const { isAdmin } = useSession();
  const integrations = useLoad((signal) => get<{ data: Integration[] }>('/v1/integrations', { signal }), []);
  const catalogue = useLoad((signal) => get('/v1/dashboard/providers', { signal }).then(providersFrom), []);
  const [editing, setEditing] = useState<Integration | 'new' | undefined>();
  const [saved, setSaved] = useState<string>();
  const action = useAction();
  const rows = integrations.data?.data ?? [];
  const act = (work: () => Promise<unknown>) => action.run(async () => { await work(); integrations.reload(); });

  return (
    <>
      <PageHeader title="Integrations">
        {isAdmin && (
          <button type="button" className="primary" onClick={() => { setSaved(undefined); setEditing('new'); }}>
            Add integration
          </button>
        )}
      </PageHeader>
      {!isAdmin && <Notice>You have read-only access: credentials are visible to administrators only.</Notice>}
      <ErrorNote error={integrations.error ?? action.error} />
      {editing && (
        <IntegrationForm
          key={editing === 'new' ? 'new' : editing._id}
          existing={editing === 'new' ? undefined : editing}
          providers={catalogue.data ?? []}
          catalogueError={catalogue.error}
          onDone={(message) => { setEditing(undefined); setSaved(message); integrations.reload(); }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {saved && !editing && (
        <p role="status" className="ok-text">
          {saved}
        </p>
      )}
      {!integrations.data && integrations.loading && <Loading what="integrations" />}
      {integrations.data && rows.length === 0 && <Empty>No integrations in this environment yet.</Empty>}
      {CHANNELS.map((channel) => {
        const ofChannel = rows.filter((row) => row.channel === channel);
        if (ofChannel.length === 0) return null;
        return (
          <section key={channel} aria-labelledby={`channel-${channel}`}>
            <h2 id={`channel-${channel}`}>{CHANNEL_LABEL[channel]}</h2>
            <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
              <table>
                <caption className="visually-hidden">{CHANNEL_LABEL[channel]} integrations</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Provider</th>
                    <th scope="col">Identifier</th>
                    <th scope="col">State</th>
                    {isAdmin && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {ofChannel.map((integration) => (
                    <tr key={integration._id}>
                      <td>{integration.name}</td>
                      <td className="mono">{integration.providerId}</td>
                      <td className="mono">{integration.identifier}</td>
                      <td>
                        <Badge value={integration.active ? 'active' : 'inactive'} />
                        {integration.primary && <Badge value="primary" />}
                      </td>
                      {isAdmin && (
                        <td className="actions">
                          <button type="button" onClick={() => setEditing(integration)}>
                            Edit <span className="visually-hidden">{integration.name}</span>
                          </button>
                          <button type="button" disabled={action.pending} onClick={() => act(() => put(`/v1/integrations/${seg(integration._id)}`, { active: !integration.active }))}>
                            {integration.active ? 'Deactivate' : 'Activate'} <span className="visually-hidden">{integration.name}</span>
                          </button>
                          {!integration.primary && (
                            <button type="button" disabled={action.pending} onClick={() => act(() => post(`/v1/integrations/${seg(integration._id)}/set-primary`, {}))}>
                              Set primary <span className="visually-hidden">{integration.name}</span>
                            </button>
                          )}
                          <button
                            type="button"
                            className="danger"
                            disabled={action.pending}
                            onClick={() => {
                              if (confirm(`Delete the integration "${integration.name}"?`)) void act(() => del(`/v1/integrations/${seg(integration._id)}`));
                            }}
                          >
                            Delete <span className="visually-hidden">{integration.name}</span>
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        );
      })}
    </>
  );
}

function IntegrationForm({
  existing,
  providers,
  catalogueError,
  onDone,
  onCancel,
}: {
  existing?: Integration;
  providers: Provider[];
  catalogueError?: string;
  onDone(message: string): void;
  onCancel(): void;
}) {
  const [channel, setChannel] = useState(existing?.channel ?? 'email');
  const ofChannel = providers.filter((provider) => provider.channel === channel);
  const [providerId, setProviderId] = useState(existing?.providerId ?? '');
  const provider = providers.find((entry) => entry.id === (providerId || ofChannel[0]?.id) && entry.channel === channel);
  const [name, setName] = useState(existing?.name ?? '');
  const [identifier, setIdentifier] = useState(existing?.identifier ?? '');
  const [active, setActive] = useState(existing?.active ?? true);
  const [check, setCheck] = useState(true);
  const [credentials, setCredentials] = useState<Record<string, string>>(() =>
    Object.fromEntries(Object.entries(existing?.credentials ?? {}).map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)])),
  );
  const [revealed, setRevealed] = useState(false);
  const [newField, setNewField] = useState('');
  const save = useAction();
  const fields = provider?.fields ?? [];
  const extraKeys = Object.keys(credentials).filter((key) => !fields.some((field) => field.key === key));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run(async () => {
      const cleaned = Object.fromEntries(Object.entries(credentials).filter(([, value]) => value !== ''));
      if (existing) {
        await put(`/v1/integrations/${seg(existing._id)}`, { name: name || undefined, identifier: identifier || undefined, active, check, credentials: cleaned });
      } else {
        await post('/v1/integrations', { providerId: provider?.id ?? providerId, channel, name: name || undefined, identifier: identifier || undefined, active, check, credentials: cleaned });
      }
      const label = name || provider?.name || providerId;
      onDone(active && check ? `${label} saved: the live check passed.` : `${label} saved (no live check run).`);
    });
  };

  return (
    <form className="panel" onSubmit={submit} aria-labelledby="integration-form-title">
      <h2 id="integration-form-title">{existing ? `Edit ${existing.name}` : 'Add an integration'}</h2>
      <ErrorNote error={catalogueError} />
      <div className="grid-2">
        <Select label="Channel" value={channel} onChange={(value) => { setChannel(value); setProviderId(''); }} options={CHANNELS.map((value) => [value, CHANNEL_LABEL[value]])} disabled={Boolean(existing)} />
        <Select
          label="Provider"
          value={provider?.id ?? ''}
          onChange={setProviderId}
          options={ofChannel.length ? ofChannel.map((entry) => [entry.id, entry.name]) : [['', 'loading catalogue…']]}
          disabled={Boolean(existing)}
        />
        <Field label="Name" value={name} onChange={setName} hint="Defaults to the provider's name." />
        <Field label="Identifier" value={identifier} onChange={setIdentifier} hint="Unique in this environment; generated when empty." />
      </div>
      <fieldset>
        <legend>Credentials</legend>
        {fields.length === 0 && extraKeys.length === 0 && <p className="muted">This provider needs no credentials.</p>}
        {(fields.some((field) => field.secret) || extraKeys.length > 0) && (
          <Checkbox label="Show secret values" checked={revealed} onChange={setRevealed} />
        )}
        <div className="grid-2">
          {[...fields, ...extraKeys.map((key): CredentialField => ({ key, label: key, required: false, secret: SECRET_FIELD.test(key) }))].map((field) => (
            <Field
              key={field.key}
              label={`${field.label}${field.required ? ' (required)' : ''}`}
              type={field.secret && !revealed ? 'password' : 'text'}
              autoComplete="off"
              value={credentials[field.key] ?? ''}
              onChange={(value) => setCredentials((current) => ({ ...current, [field.key]: value }))}
            />
          ))}
        </div>
        <div className="inline add-field">
          <Field
            label="Add another credential field"
            value={newField}
            onChange={setNewField}
            hint="Optional fields of the provider, e.g. from, senderName, region."
          />
          <button
            type="button"
            disabled={!newField.trim()}
            onClick={() => {
              const key = newField.trim();
              setCredentials((current) => ({ ...current, [key]: current[key] ?? '' }));
              setNewField('');
            }}
          >
            Add field
          </button>
        </div>
      </fieldset>
      <div className="checks">
        <Checkbox label="Active" checked={active} onChange={setActive} />
        <Checkbox label="Run the live check when saving" checked={check} onChange={setCheck} />
      </div>
      <ErrorNote error={save.error && `Not saved, the check or validation failed: ${save.error}`} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={save.pending}>
          {save.pending ? 'Saving and checking…' : existing ? 'Save integration' : 'Create integration'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
