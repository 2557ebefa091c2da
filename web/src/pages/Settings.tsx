import { useState, type FormEvent } from 'react';
import { del, get, patch, post, seg } from '../api';
import { useSession } from '../session';
import { Badge, CopyField, Empty, ErrorNote, Field, Notice, PageHeader, Select, Time, useAction, useLoad } from '../ui';

export function SettingsPage() {
  const { isAdmin, me, environment, switchEnvironment } = useSession();
  return (
    <>
      <PageHeader title="Settings" />
      <section className="panel" aria-labelledby="environments-title">
        <h2 id="environments-title">Environments</h2>
        <p className="muted">Every page shows and changes the selected environment only. The switch is also in the top bar.</p>
        {environment.identifier && (
          <CopyField label={`Application identifier (${environment.name})`} value={environment.identifier} />
        )}
        <p className="muted small">
          The application identifier is public: the <code>&lt;Inbox /&gt;</code> sends it as <code>applicationIdentifier</code>.
        </p>
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          {/* Cards on a phone (styles.css): as four columns the 24-character ids broke over several lines. */}
          <table className="cards environments">
            <caption className="visually-hidden">Environments</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">ID</th>
                <th scope="col">Application identifier</th>
                <th scope="col">Selected</th>
              </tr>
            </thead>
            <tbody>
              {me.environments.map((candidate) => (
                <tr key={candidate._id}>
                  <td data-label="Name">{candidate.name}</td>
                  <td data-label="ID" className="mono">{candidate._id}</td>
                  <td data-label="Application identifier" className="mono">{candidate.identifier ?? '—'}</td>
                  <td data-label="Selected">
                    {candidate._id === environment._id ? (
                      <strong>Selected</strong>
                    ) : (
                      <button type="button" onClick={() => switchEnvironment(candidate._id)}>
                        Switch to {candidate.name}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <Retention />
      {isAdmin ? (
        <>
          <ApiKeys environmentName={environment.name} />
          <Users currentUserId={me.user._id} />
          <Invites />
          <AuditLog />
        </>
      ) : (
        <Notice>Secret keys, users, invites and the audit log are for administrators.</Notice>
      )}
    </>
  );
}

interface ApiKey {
  _id: string;
  createdAt?: string;
  /** A mask and the key's last four characters: the key itself is shown only once, when created. */
  maskedKey: string;
  createdBy?: string;
  revokedAt?: string;
}

function ApiKeys({ environmentName }: { environmentName: string }) {
  const keys = useLoad((signal) => get<{ data: ApiKey[] }>('/v1/dashboard/api-keys', { signal }), []);
  const [created, setCreated] = useState<string>();
  const action = useAction();
  const rows = keys.data?.data ?? [];
  return (
    <section className="panel" aria-labelledby="keys-title">
      <h2 id="keys-title">Secret keys ({environmentName})</h2>
      <p className="muted">Servers send a secret key as <code>Authorization: ApiKey …</code>. A revoked key stops working at once.</p>
      <button type="button" className="primary" disabled={action.pending} onClick={() => action.run(async () => { const answer = await post('/v1/dashboard/api-keys', {}); setCreated(answer.data.secretKey); keys.reload(); })}>
        Create secret key
      </button>
      {created && (
        <div className="reveal" role="status">
          <CopyField label="New secret key (shown once: copy it now)" value={created} />
        </div>
      )}
      <ErrorNote error={keys.error ?? action.error} />
      {keys.data && rows.length === 0 && <Empty>No secret keys.</Empty>}
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Secret keys</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((key) => (
                <tr key={key._id}>
                  <td className="mono">{key.maskedKey}</td>
                  <td>
                    <Time iso={key.createdAt} />
                  </td>
                  <td>{key.revokedAt ? <Badge value="revoked" label={`revoked ${new Date(key.revokedAt).toLocaleString()}`} /> : <Badge value="active" />}</td>
                  <td>
                    {!key.revokedAt && (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => {
                        if (confirm('Revoke this key? Clients using it get 401 at once.')) void action.run(async () => { await del(`/v1/dashboard/api-keys/${seg(key._id)}`); keys.reload(); });
                      }}
                    >
                      Revoke <span className="visually-hidden">key {key.maskedKey}</span>
                    </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

interface User {
  _id: string;
  email: string;
  name?: string;
  role: 'admin' | 'viewer';
  createdAt?: string;
}

function Users({ currentUserId }: { currentUserId: string }) {
  const users = useLoad((signal) => get<{ data: User[] }>('/v1/dashboard/users', { signal }), []);
  const action = useAction();
  const rows = users.data?.data ?? [];
  return (
    <section className="panel" aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <ErrorNote error={users.error ?? action.error} />
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Users</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((user) => (
                <tr key={user._id}>
                  <td>{user.email}</td>
                  <td>{user.name ?? '—'}</td>
                  <td>
                    {user._id === currentUserId ? (
                      `${user.role} (you)`
                    ) : (
                      <Select
                        label={`Role of ${user.email}`}
                        value={user.role}
                        onChange={(role) => action.run(async () => { await patch(`/v1/dashboard/users/${seg(user._id)}`, { role }); users.reload(); })}
                        options={[
                          ['admin', 'admin'],
                          ['viewer', 'viewer'],
                        ]}
                      />
                    )}
                  </td>
                  <td>
                    {user._id !== currentUserId && (
                      <button
                        type="button"
                        className="danger"
                        onClick={() => {
                          if (confirm(`Remove ${user.email}?`)) void action.run(async () => { await del(`/v1/dashboard/users/${seg(user._id)}`); users.reload(); });
                        }}
                      >
                        Remove <span className="visually-hidden">{user.email}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

interface Invite {
  _id: string;
  role: string;
  email?: string;
  url?: string;
  expiresAt: string;
  expired?: boolean;
}

function Invites() {
  const invites = useLoad((signal) => get<{ data: Invite[] }>('/v1/dashboard/invites', { signal }), []);
  const [role, setRole] = useState('viewer');
  const [email, setEmail] = useState('');
  const [created, setCreated] = useState<Invite>();
  const action = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void action.run(async () => {
      const answer = await post<{ data: Invite }>('/v1/dashboard/invites', { role, ...(email ? { email } : {}) });
      setCreated(answer.data);
      setEmail('');
      invites.reload();
    });
  };
  const rows = invites.data?.data ?? [];
  return (
    <section className="panel" aria-labelledby="invites-title">
      <h2 id="invites-title">Invites</h2>
      <p className="muted">Herald sends no email: copy the invite link and give it to the person yourself.</p>
      <form className="toolbar" onSubmit={submit} aria-label="Create an invite">
        <Select
          label="Role"
          value={role}
          onChange={setRole}
          options={[
            ['viewer', 'viewer (read only)'],
            ['admin', 'admin'],
          ]}
        />
        <Field label="Email (optional)" type="email" value={email} onChange={setEmail} />
        <button type="submit" className="primary" disabled={action.pending}>
          Create invite link
        </button>
      </form>
      {created?.url && (
        <div className="reveal" role="status">
          <CopyField label={`Invite link for a new ${created.role}`} value={new URL(created.url, location.origin).toString()} />
        </div>
      )}
      <ErrorNote error={invites.error ?? action.error} />
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Open invites</caption>
            <thead>
              <tr>
                <th scope="col">Role</th>
                <th scope="col">Email</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((invite) => (
                <tr key={invite._id}>
                  <td>{invite.role}</td>
                  <td>{invite.email ?? 'anyone with the link'}</td>
                  <td>
                    {invite.expired ? <Badge value="expired" /> : <Time iso={invite.expiresAt} />}
                  </td>
                  <td>
                    <button type="button" className="danger" onClick={() => action.run(async () => { await del(`/v1/dashboard/invites/${seg(invite._id)}`); invites.reload(); })}>
                      Revoke <span className="visually-hidden">invite for {invite.email ?? invite.role}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

interface AuditEntry {
  _id: string;
  createdAt: string;
  action: string;
  actor: { kind: string; id?: string; label?: string };
  target?: { type: string; id: string };
  outcome: 'success' | 'failure';
  ip?: string;
}

function AuditLog() {
  const [page, setPage] = useState(0);
  const log = useLoad((signal) => get<{ data: AuditEntry[]; hasMore?: boolean }>('/v1/dashboard/audit-log', { signal, query: { page, limit: 20 } }), [page]);
  const rows = log.data?.data ?? [];
  const who = (entry: AuditEntry) => entry.actor.label ?? (entry.actor.kind === 'apiKey' ? `API key ${entry.actor.id ?? ''}` : entry.actor.kind);
  return (
    <section className="panel" aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <ErrorNote error={log.error} />
      {log.data && rows.length === 0 && <Empty>Nothing recorded yet.</Empty>}
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Audit log, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">Target</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((entry) => (
                <tr key={entry._id}>
                  <td>
                    <Time iso={entry.createdAt} />
                  </td>
                  <td>{who(entry)}</td>
                  <td className="mono">{entry.action}</td>
                  <td className="mono">{entry.target ? `${entry.target.type} ${entry.target.id}` : '—'}</td>
                  <td>
                    <Badge value={entry.outcome === 'success' ? 'success' : 'failed'} label={entry.outcome} />
                    {entry.ip && <span className="muted small"> from {entry.ip}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {log.data && (
        <nav className="pager" aria-label="Audit log pages">
          <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>Page {page + 1}</span>
          <button type="button" disabled={!log.data.hasMore} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </nav>
      )}
    </section>
  );
}

interface RetentionWindow {
  days: number | null;
  deletesBefore: string | null;
  variable: string;
}

interface RetentionSettings {
  events: RetentionWindow;
  messages: RetentionWindow;
  sweepIntervalSeconds: number;
  database: 'sqlite' | 'postgres';
  lastSweep: {
    startedAt: string;
    finishedAt: string;
    events: number;
    jobs: number;
    executionDetails: number;
    triggers: number;
    messages: number;
    reclaimedPages: number;
    interrupted: boolean;
  } | null;
}

/** The retention the server runs with: set by its configuration, shown here read only. */
function Retention() {
  const settings = useLoad((signal) => get<{ data: RetentionSettings }>('/v1/dashboard/settings/retention', { signal }), []);
  const data = settings.data?.data;
  const kept = (window: RetentionWindow) => (window.days === null ? 'kept forever' : `${window.days} day${window.days === 1 ? '' : 's'}`);
  const interval = (seconds: number) => (seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);
  return (
    <section className="panel" aria-labelledby="retention-title">
      <h2 id="retention-title">Data retention</h2>
      <p className="muted">
        Older history is deleted by a sweep in the worker. Set by the server's environment variables (all environments alike); 0 or <code>off</code>{' '}
        keeps everything.
      </p>
      <ErrorNote error={settings.error} />
      {data && (
        <dl className="settings-list">
          <dt>Events, with their jobs and execution details</dt>
          <dd>
            <strong>{kept(data.events)}</strong> <span className="muted small">({data.events.variable})</span>
            {data.events.deletesBefore && <span className="muted small"> · older than <Time iso={data.events.deletesBefore} /></span>}
          </dd>
          <dt>Messages (every channel, the Inbox's included)</dt>
          <dd>
            <strong>{kept(data.messages)}</strong> <span className="muted small">({data.messages.variable})</span>
            {data.messages.deletesBefore && <span className="muted small"> · older than <Time iso={data.messages.deletesBefore} /></span>}
          </dd>
          <dt>Sweep</dt>
          <dd>
            every {interval(data.sweepIntervalSeconds)}
            {data.database === 'sqlite' ? ', giving the freed space back to the file system' : ''}
          </dd>
          <dt>Last sweep</dt>
          <dd>
            {data.lastSweep ? (
              <>
                <Time iso={data.lastSweep.finishedAt} />
                {data.lastSweep.interrupted ? ' (interrupted)' : ''}: {data.lastSweep.events} events, {data.lastSweep.jobs} jobs,{' '}
                {data.lastSweep.executionDetails} execution details, {data.lastSweep.triggers} trigger records, {data.lastSweep.messages} messages deleted
              </>
            ) : (
              <span className="muted">none yet</span>
            )}
          </dd>
        </dl>
      )}
    </section>
  );
}
