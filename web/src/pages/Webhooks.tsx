import { useState, type FormEvent } from 'react';
import { del, get, patch, post, seg } from '../api';
import { Link } from '../router';
import { useSession } from '../session';
import { Badge, Checkbox, CopyField, Empty, ErrorNote, Field, Loading, Notice, PageHeader, Pager, Select, Time, useAction, useLoad } from '../ui';

interface Endpoint {
  _id: string;
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  headers: Record<string, string>;
  disabledReason?: string;
  failingSince?: string;
  createdAt: string;
}

interface Attempt {
  _id: string;
  eventType: string;
  webhookId: string;
  attempt: number;
  status: 'success' | 'failed' | 'pending';
  responseStatusCode?: number;
  durationMs: number;
  responseBodySnippet: string;
  error?: string;
  dueAt: string;
  createdAt: string;
}

/** Outbound webhook endpoints of the environment: admins manage them; viewers see them without secrets. */
export function WebhooksPage() {
  const { isAdmin } = useSession();
  const list = useLoad((signal) => get<{ data: Endpoint[] }>('/v2/webhooks/endpoints', { signal }), []);
  const types = useLoad((signal) => get<{ data: Array<{ type: string; description: string }> }>('/v2/webhooks/event-types', { signal }), []);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [created, setCreated] = useState<{ url: string; secret: string } | undefined>();
  const create = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void create.run(async () => {
      const answer = await post<{ data: Endpoint & { secret: string } }>('/v2/webhooks/endpoints', { url, description: description || undefined, eventTypes: chosen });
      setCreated({ url: answer.data.url, secret: answer.data.secret });
      setUrl('');
      setDescription('');
      setChosen([]);
      list.reload();
    });
  };
  const rows = list.data?.data ?? [];
  return (
    <>
      <PageHeader title="Webhooks" />
      <p className="muted">Herald POSTs signed events (Standard Webhooks) to these endpoints. See docs/webhooks.md for verifying them.</p>
      {isAdmin && (
        <form className="stack" onSubmit={submit} aria-label="Add an endpoint">
          <Field label="Endpoint URL" value={url} onChange={setUrl} required placeholder="https://example.com/webhooks/herald" />
          <Field label="Description" value={description} onChange={setDescription} />
          <fieldset>
            <legend>Events (none chosen: all events)</legend>
            <div className="checkbox-grid">
              {(types.data?.data ?? []).map((type) => (
                <Checkbox
                  key={type.type}
                  label={type.type}
                  checked={chosen.includes(type.type)}
                  onChange={(on) => setChosen(on ? [...chosen, type.type] : chosen.filter((t) => t !== type.type))}
                />
              ))}
            </div>
          </fieldset>
          <button type="submit" className="primary" disabled={create.pending}>
            Add endpoint
          </button>
        </form>
      )}
      {created && (
        <Notice>
          Endpoint {created.url} added. Its signing secret:
          <CopyField label="Signing secret" value={created.secret} />
        </Notice>
      )}
      <ErrorNote error={list.error ?? create.error} />
      {!list.data && list.loading && <Loading what="endpoints" />}
      {list.data && rows.length === 0 && <Empty>No webhook endpoints yet.</Empty>}
      {rows.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Webhook endpoints</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((endpoint) => (
                <tr key={endpoint._id}>
                  <td>
                    <Link to={`/webhooks/${seg(endpoint._id)}`} className="mono">
                      {endpoint.url}
                    </Link>
                    {endpoint.description && <div className="muted">{endpoint.description}</div>}
                  </td>
                  <td>{endpoint.eventTypes.length ? endpoint.eventTypes.join(', ') : 'all events'}</td>
                  <td>
                    <Badge value={endpoint.enabled ? 'active' : 'inactive'} label={endpoint.enabled ? 'enabled' : 'disabled'} />
                  </td>
                  <td>
                    <Time iso={endpoint.createdAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function WebhookEndpointPage({ id }: { id: string }) {
  const { isAdmin } = useSession();
  const endpoint = useLoad((signal) => get<{ data: Endpoint }>(`/v2/webhooks/endpoints/${seg(id)}`, { signal }), [id]);
  const [page, setPage] = useState(0);
  const [status, setStatus] = useState('');
  const attempts = useLoad(
    (signal) => get<{ data: Attempt[]; hasMore: boolean }>(`/v2/webhooks/endpoints/${seg(id)}/attempts`, { signal, query: { page, limit: 20, status: status || undefined } }),
    [id, page, status],
    { every: 3000 },
  );
  const [secret, setSecret] = useState<string | undefined>();
  const [since, setSince] = useState(() => new Date(Date.now() - 24 * 3_600_000).toISOString());
  const [message, setMessage] = useState<string | undefined>();
  const action = useAction();
  const run = (work: () => Promise<string | void>) =>
    void action.run(async () => {
      const note = await work();
      setMessage(note || undefined);
      endpoint.reload();
      attempts.reload();
    });
  const data = endpoint.data?.data;
  return (
    <>
      <p className="crumbs">
        <Link to="/webhooks">Webhooks</Link> / {data?.url ?? id}
      </p>
      <PageHeader title="Webhook endpoint" />
      <ErrorNote error={endpoint.error ?? action.error} />
      {message && <Notice>{message}</Notice>}
      {!data && endpoint.loading && <Loading what="the endpoint" />}
      {data && (
        <section aria-label="Endpoint">
          <dl className="facts">
            <dt>URL</dt>
            <dd className="mono">{data.url}</dd>
            <dt>Events</dt>
            <dd>{data.eventTypes.length ? data.eventTypes.join(', ') : 'all events'}</dd>
            <dt>State</dt>
            <dd>
              <Badge value={data.enabled ? 'active' : 'inactive'} label={data.enabled ? 'enabled' : 'disabled'} />
              {data.disabledReason && <p role="status">{data.disabledReason}</p>}
            </dd>
            {Object.keys(data.headers).length > 0 && (
              <>
                <dt>Extra headers</dt>
                <dd className="mono">{Object.entries(data.headers).map(([name, value]) => `${name}: ${value}`).join('; ')}</dd>
              </>
            )}
          </dl>
          {isAdmin && (
            <div className="toolbar" role="group" aria-label="Endpoint actions">
              <button type="button" disabled={action.pending} onClick={() => run(async () => {
                  await post(`/v2/webhooks/endpoints/${seg(id)}/test`);
                  return 'Test event queued.';
                })}>
                Send test event
              </button>
              <button type="button" disabled={action.pending} onClick={() => run(async () => setSecret((await get<{ data: { secret: string } }>(`/v2/webhooks/endpoints/${seg(id)}/secret`)).data.secret))}>
                Reveal secret
              </button>
              <button
                type="button"
                disabled={action.pending}
                onClick={() =>
                  run(async () => {
                    setSecret((await post<{ data: { secret: string } }>(`/v2/webhooks/endpoints/${seg(id)}/rotate-secret`)).data.secret);
                    return 'Secret rotated: for 24 hours events are signed with the old and the new secret.';
                  })
                }
              >
                Rotate secret
              </button>
              <button type="button" disabled={action.pending} onClick={() => run(async () => void (await patch(`/v2/webhooks/endpoints/${seg(id)}`, { enabled: !data.enabled })))}>
                {data.enabled ? 'Disable' : 'Enable'}
              </button>
              <button
                type="button"
                className="danger"
                disabled={action.pending}
                onClick={() =>
                  run(async () => {
                    if (!window.confirm('Delete this endpoint?')) return;
                    await del(`/v2/webhooks/endpoints/${seg(id)}`);
                    history.back();
                  })
                }
              >
                Delete
              </button>
            </div>
          )}
          {secret && <CopyField label="Signing secret" value={secret} />}
          {isAdmin && (
            <form
              className="toolbar"
              aria-label="Recover failed events"
              onSubmit={(event) => {
                event.preventDefault();
                run(async () => `${(await post<{ data: { recovered: number } }>(`/v2/webhooks/endpoints/${seg(id)}/recover`, { since })).data.recovered} failed events queued again.`);
              }}
            >
              <Field label="Failed since (ISO 8601)" value={since} onChange={setSince} required />
              <button type="submit" disabled={action.pending}>
                Recover failed events
              </button>
            </form>
          )}
        </section>
      )}
      <h2>Attempts</h2>
      <Select
        label="Status"
        value={status}
        onChange={(value) => {
          setStatus(value);
          setPage(0);
        }}
        options={[
          ['', 'all'],
          ['success', 'success'],
          ['failed', 'failed'],
          ['pending', 'pending'],
        ]}
      />
      <ErrorNote error={attempts.error} />
      {attempts.data && attempts.data.data.length === 0 && <Empty>No attempts yet.</Empty>}
      {attempts.data && attempts.data.data.length > 0 && (
        <div className="table-wrap" tabIndex={0} role="group" aria-label="Table, scrolls sideways">
          <table>
            <caption className="visually-hidden">Delivery attempts</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col">Time</th>
                {isAdmin && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {attempts.data.data.map((attempt) => (
                <tr key={attempt._id} data-attempt-id={attempt._id}>
                  <td>
                    {attempt.eventType}
                    <div className="muted mono">{attempt.webhookId}</div>
                  </td>
                  <td>{attempt.attempt}</td>
                  <td>
                    <Badge value={attempt.status} />
                  </td>
                  <td>
                    {attempt.responseStatusCode !== undefined ? `HTTP ${attempt.responseStatusCode}` : (attempt.error ?? '—')}
                    {attempt.status !== 'pending' && <span className="muted"> ({attempt.durationMs} ms)</span>}
                    {attempt.responseBodySnippet && <pre className="json">{attempt.responseBodySnippet}</pre>}
                  </td>
                  <td>
                    <Time iso={attempt.createdAt} />
                  </td>
                  {isAdmin && (
                    <td>
                      <button type="button" disabled={action.pending} onClick={() => run(async () => {
                          await post(`/v2/webhooks/attempts/${seg(attempt._id)}/resend`);
                          return 'Event queued again.';
                        })}>
                        Resend
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager page={page} hasMore={attempts.data?.hasMore ?? false} onPage={setPage} />
    </>
  );
}
